"""The PaddleJob resource and decoding of the raw objects its informer caches: decode and
validate once per sync; a failure raises :class:`InvalidPaddleJobError` with the reason, which
the controller reports on the job (D8)."""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9, Defaults
from tf_operator.apis.paddle.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.apis.paddle.validation.validation import (
    ValidationError,
    validate_v1_paddlejob,
)
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.k8s.client import Resource

PADDLEJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)


class InvalidPaddleJobError(InvalidJobError):
    """The cached object does not decode or validate as a PaddleJob."""


def decode_paddlejob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> PaddleJob:
    """Decode and validate a PaddleJob dict (the replica specs' defaults are not applied)."""
    job = decode_validated_paddlejob(raw, defaults)
    try:
        validate_v1_paddlejob(job)
    except ValidationError as err:
        raise InvalidPaddleJobError(str(err)) from err
    return job


def decode_validated_paddlejob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> PaddleJob:
    """:func:`decode_paddlejob` without the validation, for a job found valid before."""
    try:
        return PaddleJob.from_dict(raw, defaults)
    except DecodeError as err:
        raise InvalidPaddleJobError(str(err)) from err
