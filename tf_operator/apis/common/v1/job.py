"""What every kind's job type shares: its envelope, its encoding and the metadata it is read by.

A job of any kind (TFJob, PyTorchJob) is ``apiVersion``, ``kind``, ``metadata``, its own
``spec``, the common ``status`` and any top-level key we do not model. Each kind's dataclass
keeps its spec typed and declares the :class:`JobObject` protocol explicitly, which gives it
the accessors the controller reads (``name``, ``namespace``, ``uid``,
``deletion_timestamp``, ``object_ref``), ``to_dict`` and ``deep_copy``, written once here;
:func:`decode_envelope` reads a job's JSON for the kind's ``from_dict``, its spec through the
kind's own decoder. So both kinds read and write their JSON the same way.

Why a protocol with default methods and not attribute descriptors (``name =
MetadataField("name")``): mypy does not see a descriptor as the read-only property a protocol
asks for when it checks a type argument's bound in another module (python/mypy#20317), and
``JobKind[TFJob]`` is such a check. The protocol still names every field its methods read, so
a type checker and a reader see the whole contract.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

from tf_operator.apis.common.v1.fields import expect_dict, opt_str, rest
from tf_operator.apis.common.v1.types import JobStatus, object_ref
from tf_operator.k8s.objects import json_copy

# The top-level keys a job type models; the others are kept in its ``extra``.
ENVELOPE_KEYS = ("apiVersion", "kind", "metadata", "spec", "status")

S = TypeVar("S")


class JobSpec(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class JobObject(Protocol):
    """A decoded job of any kind; its dataclass declares this protocol for the methods below."""

    api_version: str
    kind: str
    metadata: dict[str, Any]
    spec: JobSpec
    status: JobStatus
    extra: dict[str, Any]  # top-level keys we do not model, written back as they came

    @property
    def name(self) -> str:
        return _text(self.metadata, "name")

    @property
    def namespace(self) -> str:
        return _text(self.metadata, "namespace")

    @property
    def uid(self) -> str:
        return _text(self.metadata, "uid")

    @property
    def deletion_timestamp(self) -> str:
        """Empty unless the job is being deleted."""
        return _text(self.metadata, "deletionTimestamp")

    def object_ref(self) -> dict[str, Any]:
        """A small object naming this job, for events (what an event's involvedObject needs)."""
        return object_ref(self.api_version, self.kind, self.metadata)

    def to_dict(self) -> dict[str, Any]:
        """The job's JSON, every field we did not model untouched."""
        out: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": json_copy(self.metadata),
            "spec": self.spec.to_dict(),
            "status": self.status.to_dict(),
        }
        out.update(json_copy(self.extra))
        return out

    def deep_copy(self) -> Self:
        return copy.deepcopy(self)


def _text(metadata: dict[str, Any], key: str) -> str:
    value = metadata.get(key)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Envelope(Generic[S]):
    """A job's JSON decoded, its spec by the kind's decoder."""

    metadata: dict[str, Any]
    spec: S
    status: JobStatus
    api_version: str
    kind: str
    extra: dict[str, Any]


def decode_envelope(
    data: Any, kind: str, api_version: str, decode_spec: Callable[[Any], S]
) -> Envelope[S]:
    """Decode a job of ``kind``, its spec with ``decode_spec``; raises
    :class:`~tf_operator.apis.common.v1.fields.DecodeError` with the path of the first
    malformed field (metadata, spec, status, then the rest). A missing ``apiVersion`` or
    ``kind`` reads as the kind's own."""
    data = expect_dict(data, kind, allow_none=False)
    assert data is not None
    metadata = expect_dict(data.get("metadata"), "metadata") or {}
    return Envelope(
        metadata=json_copy(metadata),
        spec=decode_spec(data.get("spec")),
        status=JobStatus.from_dict(data.get("status")),
        api_version=opt_str(data, "apiVersion", kind) or api_version,
        kind=opt_str(data, "kind", kind) or kind,
        extra=rest(data, ENVELOPE_KEYS),
    )
