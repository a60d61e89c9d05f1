"""The exceptions the SDK raises, one class per answer a caller handles differently.

Every API failure is an :class:`ApiError` (the project client's own class, so code that already
catches it keeps working); the SDK narrows it to a subclass by the Status ``reason``, the way
client-go's ``errors.IsNotFound`` family decides:

* :class:`NotFound` (404): the TFJob (or pod) does not exist;
* :class:`Conflict` (409): a write lost an optimistic-concurrency race, or
  :class:`AlreadyExists` (409 too): a create named an existing object;
* :class:`JobFinished` (409, the SDK's own answer): a finished job cannot be suspended or
  resumed;
* :class:`Invalid` (422): the API server refused the object; ``causes`` lists each field error
  (``field``, ``reason``, ``message``) from the Status ``details``.

The message is always the API server's own text. :class:`WaitTimeout` says a wait ran out of
time; it carries the job as last seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tf_operator.k8s.client.errors import (
    ApiError,
    is_already_exists,
    is_conflict,
    is_invalid,
    is_not_found,
)

__all__ = [
    "AlreadyExists",
    "ApiError",
    "Conflict",
    "FieldCause",
    "Invalid",
    "JobFinished",
    "NotFound",
    "WaitTimeout",
    "translate",
]


class NotFound(ApiError):
    """404: the object does not exist."""


class Conflict(ApiError):
    """409: the write conflicts with the object's current state (stale resourceVersion)."""


class AlreadyExists(Conflict):
    """409: an object of that name exists already."""


class JobFinished(Conflict):
    """A finished job (Succeeded or Failed, which are final) cannot be suspended or resumed:
    the operator would ignore the change, and describing the job would say it is pending.
    Raised by the SDK itself, before any write."""


@dataclass(frozen=True)
class FieldCause:
    """One field error of an :class:`Invalid` answer (a ``metav1.StatusCause``)."""

    field: str
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class Invalid(ApiError):
    """422: the API server refused the object; ``causes`` names each offending field."""

    @property
    def causes(self) -> list[FieldCause]:
        details = (self.body or {}).get("details") or {}
        return [
            FieldCause(c.get("field", ""), c.get("reason", ""), c.get("message", ""))
            for c in details.get("causes") or []
        ]


class WaitTimeout(TimeoutError):
    """A wait ended before the job reached the conditions asked for."""

    def __init__(self, message: str, job: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.job = job


def translate(err: ApiError) -> ApiError:
    """The same error as the most specific SDK class (the original is kept as ``__cause__``)."""
    for predicate, cls in (
        (is_not_found, NotFound),
        (is_already_exists, AlreadyExists),
        (is_conflict, Conflict),
        (is_invalid, Invalid),
    ):
        if predicate(err) and not isinstance(err, cls):
            narrowed = cls(err.status, err.reason, err.message, err.body, err.retry_after)
            narrowed.__cause__ = err
            return narrowed
    return err
