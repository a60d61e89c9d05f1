"""The ``StatusError`` exception and constructors for every ``metav1.Status`` failure we return.

Every error leaving the emulator, in process or over HTTP, is a ``StatusError`` carrying the full
``Status`` body, so the HTTP layer only serialises ``err.status`` with ``err.code``. The reason
strings matter: old client-go decides IsNotFound/IsConflict/... from ``reason`` alone.
"""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """A Kubernetes API error: ``code`` (HTTP status), ``reason`` and the ``Status`` body."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.warnings: list[str] = []  # sent as Warning headers with the Status
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
        if not reason:  # an internal error's Status has none
            del status["reason"]
        if details is not None:
            status["details"] = details
        self.status = status

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def _details(
    name: str | None, group: str, resource: str, causes: list[Any] | None = None
) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    if causes:
        details["causes"] = causes
    return details


def _qualified(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def _about(code: int, reason: str, group: str, resource: str, name: str, what: str) -> StatusError:
    """An error about one named object: ``<resource>.<group> "<name>" <what>``."""
    text = f'{_qualified(group, resource)} "{name}" {what}'
    return StatusError(code, reason, text, _details(name, group, resource))


def not_found(group: str, resource: str, name: str) -> StatusError:
    return _about(404, "NotFound", group, resource, name, "not found")


NO_RESOURCE = "the server could not find the requested resource"


def resource_not_found() -> StatusError:
    """404 for a path that names no known resource (empty details, like the real server)."""
    return StatusError(404, "NotFound", NO_RESOURCE, {})


def already_exists(group: str, resource: str, name: str) -> StatusError:
    return _about(409, "AlreadyExists", group, resource, name, "already exists")


def conflict(group: str, resource: str, name: str, why: str | None = None) -> StatusError:
    why = (
        why
        or "the object has been modified; please apply your changes to the latest version and try again"
    )
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(group, resource)} "{name}": {why}',
        _details(name, group, resource),
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(group: str, resource: str, name: str, why: str) -> StatusError:
    target = f'{_qualified(group, resource)} "{name}"' if name else _qualified(group, resource)
    return StatusError(
        403, "Forbidden", f"{target} is forbidden: {why}", _details(name, group, resource)
    )


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> StatusError:
    return StatusError(405, "MethodNotAllowed", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def unsupported_media_type(message: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", message)


def unknown_body_format(accepted: list[str] | tuple[str, ...]) -> StatusError:
    """415 for a body (or patch) content type the resource does not take."""
    return unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )


def invalid(
    kind: str, group: str, resource: str, name: str, causes: list[dict[str, Any]]
) -> StatusError:
    """422 Invalid; ``causes`` are ``{"field", "message", "reason"}`` dicts. The message joins
    them as apimachinery's aggregate error does: duplicates once, several in brackets."""
    texts = list(
        dict.fromkeys(
            f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes
        )
    )
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    details = _details(name, group, kind, causes)
    return StatusError(
        422,
        "Invalid",
        f"{kind}.{group or ''}".rstrip(".") + f' "{name}" is invalid: {text}',
        details,
    )


def field_cause(field: str, message: str, reason: str = "FieldValueInvalid") -> dict[str, Any]:
    return {"reason": reason, "message": message, "field": field}


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def too_many_requests(retry_after: int) -> StatusError:
    return StatusError(
        429,
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
        {"retryAfterSeconds": retry_after},
        retry_after=retry_after,
    )


def internal_error(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}")


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")
