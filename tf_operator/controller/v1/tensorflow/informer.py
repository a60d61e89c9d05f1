"""The TFJob resource, its informer's resync period, and decoding of the raw objects it caches.

The informer caches TFJobs as plain dicts (v0.5.3 used a dynamic, unstructured informer), so a
malformed object can sit in the cache without breaking it. The controller decodes a job once
per sync with :func:`decode_tfjob`, which decodes and validates; a failure raises
:class:`InvalidTFJobError` carrying the real reason, which the controller reports on the job
instead of v0.5.3's generic "failed to marshal the object to TFJob" (divergence D8).
"""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, Defaults
from tf_operator.apis.tensorflow.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.apis.tensorflow.validation.validation import ValidationError, validate_v1_tfjob
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.k8s.client import Resource

TFJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)

# v0.5.3 resynced the TFJob informer every 30 s whatever --resyc-period said.
TFJOB_RESYNC_PERIOD = 30.0


class InvalidTFJobError(InvalidJobError):
    """The cached object does not decode or validate as a TFJob."""


def decode_tfjob(raw: Any, defaults: Defaults = DEFAULTS_V0_5_3) -> TFJob:
    """Decode and validate a TFJob dict (the replica specs' defaults are not applied; the run
    policy is normalised with ``defaults``, unless the job's annotation picks others)."""
    job = decode_validated_tfjob(raw, defaults)
    try:
        validate_v1_tfjob(job)
    except ValidationError as err:
        raise InvalidTFJobError(str(err)) from err
    return job


def decode_validated_tfjob(raw: Any, defaults: Defaults = DEFAULTS_V0_5_3) -> TFJob:
    """:func:`decode_tfjob` without the validation, for a job whose name and spec were found
    valid before (its status still has to decode)."""
    try:
        return TFJob.from_dict(raw, defaults)
    except DecodeError as err:
        raise InvalidTFJobError(str(err)) from err
