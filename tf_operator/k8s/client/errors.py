"""API errors, decided the way client-go's ``api/errors`` package decides them.

An :class:`ApiError` carries the HTTP code and, when the server sent one, the
``metav1.Status`` body. The ``is_*`` predicates look at the Status ``reason``
first, as client-go does, and fall back to the HTTP code only when the body
carried no reason. The ``new_*`` constructors build errors with real Status
bodies; the fake client and tests use them.
"""

from __future__ import annotations

import json
from typing import Any

# Status reasons (metav1.StatusReason) that the predicates and constructors use.
REASON_NOT_FOUND = "NotFound"
REASON_ALREADY_EXISTS = "AlreadyExists"
REASON_CONFLICT = "Conflict"
REASON_GONE = "Gone"
REASON_EXPIRED = "Expired"
REASON_INVALID = "Invalid"
REASON_BAD_REQUEST = "BadRequest"
REASON_UNAUTHORIZED = "Unauthorized"
REASON_FORBIDDEN = "Forbidden"
REASON_METHOD_NOT_ALLOWED = "MethodNotAllowed"
REASON_TOO_MANY_REQUESTS = "TooManyRequests"
REASON_INTERNAL_ERROR = "InternalError"
REASON_SERVICE_UNAVAILABLE = "ServiceUnavailable"
REASON_TIMEOUT = "Timeout"
REASON_SERVER_TIMEOUT = "ServerTimeout"
REASON_UNKNOWN = "Unknown"

# The reason client-go infers when a response has no Status body.
_REASON_FOR_CODE = {
    400: REASON_BAD_REQUEST,
    401: REASON_UNAUTHORIZED,
    403: REASON_FORBIDDEN,
    404: REASON_NOT_FOUND,
    405: REASON_METHOD_NOT_ALLOWED,
    409: REASON_CONFLICT,
    410: REASON_GONE,
    422: REASON_INVALID,
    429: REASON_TOO_MANY_REQUESTS,
    500: REASON_INTERNAL_ERROR,
    503: REASON_SERVICE_UNAVAILABLE,
    504: REASON_SERVER_TIMEOUT,
}


class ApiError(Exception):
    """An error answer from the API server (or the fake), with its Status body."""

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        body: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message or reason or f"HTTP {status}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body
        self.retry_after = retry_after

    @property
    def code(self) -> int:
        return self.status

    def __str__(self) -> str:
        text = self.message or self.reason or "unknown error"
        return f"({self.status} {self.reason}) {text}" if self.status else text

    def __reduce__(self) -> tuple[Any, ...]:  # keep the attributes across pickling/copying
        return (
            self.__class__,
            (self.status, self.reason, self.message, self.body, self.retry_after),
        )


class TransportError(ApiError):
    """The request never got an HTTP answer (connection refused, reset, timeout).

    Its status is 0 and its reason empty, so every ``is_*`` predicate is false;
    code that handles any ``ApiError`` generically still catches it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(0, "", message)


def status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``metav1.Status`` failure body."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def from_status(status: dict[str, Any], http_code: int | None = None) -> ApiError:
    """Build an ApiError from a Status dict (a response body or a watch ERROR event)."""
    code = int(status.get("code") or http_code or 500)
    reason = status.get("reason") or _REASON_FOR_CODE.get(code, REASON_UNKNOWN)
    message = status.get("message") or ""
    retry_after = None
    details = status.get("details") or {}
    if details.get("retryAfterSeconds"):
        retry_after = float(details["retryAfterSeconds"])
    return ApiError(code, reason, message, status, retry_after)


def from_response(code: int, data: bytes, headers: Any = None) -> ApiError:
    """Build an ApiError from a non-2xx HTTP response."""
    body = None
    try:
        parsed = json.loads(data) if data else None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            body = parsed
    except ValueError:
        pass
    retry_after = None
    if headers is not None:
        value = headers.get("Retry-After")
        if value:
            try:
                retry_after = float(value)
            except ValueError:
                retry_after = None
    if body is not None:
        err = from_status(body, code)
        err.status = code
        if retry_after is not None:
            err.retry_after = retry_after
        return err
    text = data.decode("utf-8", "replace").strip() if data else ""
    reason = _REASON_FOR_CODE.get(code, REASON_UNKNOWN)
    return ApiError(code, reason, text or f"the server returned HTTP {code}", None, retry_after)


def reason_for_error(err: BaseException) -> str:
    """The Status reason of an ApiError, or "" for anything else."""
    return err.reason if isinstance(err, ApiError) else ""


def _matches(err: BaseException, reason: str, code: int) -> bool:
    if not isinstance(err, ApiError):
        return False
    if err.reason and err.reason != REASON_UNKNOWN:
        return err.reason == reason
    return err.status == code


def is_not_found(err: BaseException) -> bool:
    return _matches(err, REASON_NOT_FOUND, 404)


def is_already_exists(err: BaseException) -> bool:
    return _matches(err, REASON_ALREADY_EXISTS, 409)


def is_conflict(err: BaseException) -> bool:
    return _matches(err, REASON_CONFLICT, 409)


def is_invalid(err: BaseException) -> bool:
    return _matches(err, REASON_INVALID, 422)


def is_bad_request(err: BaseException) -> bool:
    return _matches(err, REASON_BAD_REQUEST, 400)


def is_unauthorized(err: BaseException) -> bool:
    return _matches(err, REASON_UNAUTHORIZED, 401)


def is_forbidden(err: BaseException) -> bool:
    return _matches(err, REASON_FORBIDDEN, 403)


def is_method_not_allowed(err: BaseException) -> bool:
    return _matches(err, REASON_METHOD_NOT_ALLOWED, 405)


def is_too_many_requests(err: BaseException) -> bool:
    return _matches(err, REASON_TOO_MANY_REQUESTS, 429)


def is_internal_error(err: BaseException) -> bool:
    return _matches(err, REASON_INTERNAL_ERROR, 500)


def is_service_unavailable(err: BaseException) -> bool:
    return _matches(err, REASON_SERVICE_UNAVAILABLE, 503)


def is_server_timeout(err: BaseException) -> bool:
    return _matches(err, REASON_SERVER_TIMEOUT, 504)


def is_timeout(err: BaseException) -> bool:
    return _matches(err, REASON_TIMEOUT, 504)


def is_resource_expired(err: BaseException) -> bool:
    """410: the requested resourceVersion is too old (reason Expired or Gone)."""
    if not isinstance(err, ApiError):
        return False
    if err.reason in (REASON_EXPIRED, REASON_GONE):
        return True
    return err.status == 410 and err.reason in ("", REASON_UNKNOWN)


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def new_not_found(resource: str, name: str, group: str = "") -> ApiError:
    details = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    msg = f'{_qualified(resource, group)} "{name}" not found'
    return from_status(status_body(404, REASON_NOT_FOUND, msg, details))


def new_already_exists(resource: str, name: str, group: str = "") -> ApiError:
    details = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    msg = f'{_qualified(resource, group)} "{name}" already exists'
    return from_status(status_body(409, REASON_ALREADY_EXISTS, msg, details))


def new_conflict(resource: str, name: str, why: str, group: str = "") -> ApiError:
    details = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    msg = f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}'
    return from_status(status_body(409, REASON_CONFLICT, msg, details))


def new_forbidden(resource: str, name: str, why: str, group: str = "") -> ApiError:
    details = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    msg = f'{_qualified(resource, group)} "{name}" is forbidden: {why}'
    return from_status(status_body(403, REASON_FORBIDDEN, msg, details))


def new_resource_expired(message: str = "too old resource version") -> ApiError:
    return from_status(status_body(410, REASON_EXPIRED, message))


def new_bad_request(message: str) -> ApiError:
    return from_status(status_body(400, REASON_BAD_REQUEST, message))


def new_invalid(kind: str, name: str, message: str) -> ApiError:
    msg = f'{kind} "{name}" is invalid: {message}'
    return from_status(status_body(422, REASON_INVALID, msg, {"name": name, "kind": kind}))


def new_internal_error(message: str) -> ApiError:
    return from_status(
        status_body(500, REASON_INTERNAL_ERROR, f"Internal error occurred: {message}")
    )


def new_service_unavailable(message: str) -> ApiError:
    return from_status(status_body(503, REASON_SERVICE_UNAVAILABLE, message))


def new_too_many_requests(message: str, retry_after_seconds: int = 1) -> ApiError:
    body = status_body(
        429, REASON_TOO_MANY_REQUESTS, message, {"retryAfterSeconds": retry_after_seconds}
    )
    return from_status(body)
