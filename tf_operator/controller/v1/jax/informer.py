"""The JAXJob resource and decoding of the raw objects its informer caches: decode and
validate once per sync; a failure raises :class:`InvalidJAXJobError` with the reason, which
the controller reports on the job (D8)."""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9, Defaults
from tf_operator.apis.jax.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.apis.jax.validation.validation import (
    ValidationError,
    validate_v1_jaxjob,
)
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.k8s.client import Resource

JAXJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)


class InvalidJAXJobError(InvalidJobError):
    """The cached object does not decode or validate as a JAXJob."""


def decode_jaxjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> JAXJob:
    """Decode and validate a JAXJob dict (the replica specs' defaults are not applied)."""
    job = decode_validated_jaxjob(raw, defaults)
    try:
        validate_v1_jaxjob(job)
    except ValidationError as err:
        raise InvalidJAXJobError(str(err)) from err
    return job


def decode_validated_jaxjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> JAXJob:
    """:func:`decode_jaxjob` without the validation, for a job found valid before."""
    try:
        return JAXJob.from_dict(raw, defaults)
    except DecodeError as err:
        raise InvalidJAXJobError(str(err)) from err
