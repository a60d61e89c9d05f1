"""The PyTorchJob resource and decoding of the raw objects its informer caches.

As for TFJob (:mod:`tf_operator.controller.v1.tensorflow.informer`), the informer caches plain
dicts and the controller decodes a job once per sync: :func:`decode_pytorchjob` decodes and
validates, and a failure raises :class:`InvalidPyTorchJobError` with the reason, which the
controller reports on the job (D8).
"""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9, Defaults
from tf_operator.apis.pytorch.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.apis.pytorch.validation.validation import (
    ValidationError,
    validate_v1_pytorchjob,
)
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.k8s.client import Resource

PYTORCHJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)


class InvalidPyTorchJobError(InvalidJobError):
    """The cached object does not decode or validate as a PyTorchJob."""


def decode_pytorchjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> PyTorchJob:
    """Decode and validate a PyTorchJob dict (the replica specs' defaults are not applied)."""
    job = decode_validated_pytorchjob(raw, defaults)
    try:
        validate_v1_pytorchjob(job)
    except ValidationError as err:
        raise InvalidPyTorchJobError(str(err)) from err
    return job


def decode_validated_pytorchjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> PyTorchJob:
    """:func:`decode_pytorchjob` without the validation, for a job whose name and spec were
    found valid before (its status still has to decode)."""
    try:
        return PyTorchJob.from_dict(raw, defaults)
    except DecodeError as err:
        raise InvalidPyTorchJobError(str(err)) from err
