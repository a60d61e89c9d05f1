"""The XGBoostJob resource and decoding of the raw objects its informer caches: decode and
validate once per sync; a failure raises :class:`InvalidXGBoostJobError` with the reason, which
the controller reports on the job (D8)."""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9, Defaults
from tf_operator.apis.xgboost.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.apis.xgboost.validation.validation import (
    ValidationError,
    validate_v1_xgboostjob,
)
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.k8s.client import Resource

XGBOOSTJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)


class InvalidXGBoostJobError(InvalidJobError):
    """The cached object does not decode or validate as an XGBoostJob."""


def decode_xgboostjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> XGBoostJob:
    """Decode and validate an XGBoostJob dict (the replica specs' defaults are not applied)."""
    job = decode_validated_xgboostjob(raw, defaults)
    try:
        validate_v1_xgboostjob(job)
    except ValidationError as err:
        raise InvalidXGBoostJobError(str(err)) from err
    return job


def decode_validated_xgboostjob(raw: Any, defaults: Defaults = DEFAULTS_V1_9) -> XGBoostJob:
    """:func:`decode_xgboostjob` without the validation, for a job found valid before."""
    try:
        return XGBoostJob.from_dict(raw, defaults)
    except DecodeError as err:
        raise InvalidXGBoostJobError(str(err)) from err
