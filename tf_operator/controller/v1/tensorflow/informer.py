"""The TFJob informer and decoding of the raw objects it caches.

The informer caches TFJobs as plain dicts (v0.5.3 used a dynamic, unstructured informer), so a
malformed object can sit in the cache without breaking it. Every read goes through
:func:`decode_tfjob`, which decodes and validates; failures raise :class:`InvalidTFJobError`
carrying the real reason, which the controller reports on the job (Warning event and Failed
condition) instead of v0.5.3's generic "failed to marshal the object to TFJob" (spec §10 #10).
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.apis.common.v1.types import DecodeError
from tf_operator.apis.tensorflow.v1.constants import GROUP_NAME, GROUP_VERSION, KIND, PLURAL
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.apis.tensorflow.validation.validation import ValidationError, validate_v1_tfjob
from tf_operator.k8s.client import Resource
from tf_operator.logger import logger_for_unstructured

log = logging.getLogger(__name__)

TFJOBS = Resource(GROUP_NAME, GROUP_VERSION, PLURAL, KIND, True)

# v0.5.3 resynced the TFJob informer every 30 s whatever --resyc-period said.
TFJOB_RESYNC_PERIOD = 30.0

FAILED_MARSHAL_MSG = "Failed to marshal the object to TFJob: %s"


class TFJobNotFoundError(LookupError):
    """The TFJob is not in the informer cache (it was deleted)."""


class InvalidTFJobError(ValueError):
    """The cached object does not decode or validate as a TFJob; ``raw`` is that object."""

    def __init__(self, raw: dict, reason: str) -> None:
        super().__init__(reason)
        self.raw = raw


def decode_tfjob(raw: Any) -> TFJob:
    """Decode and validate a TFJob dict (defaults are not applied)."""
    try:
        job = TFJob.from_dict(raw)
        validate_v1_tfjob(job)
    except (DecodeError, ValidationError) as err:
        if isinstance(raw, dict):
            logger_for_unstructured(raw, KIND).error(FAILED_MARSHAL_MSG, err)
        raise InvalidTFJobError(raw if isinstance(raw, dict) else {}, str(err)) from err
    return job


def new_tfjob_informer(informer_factory: Any) -> Any:
    """The shared informer of ``kubeflow.org/v1`` TFJobs from a factory."""
    return informer_factory.for_resource(TFJOBS)


class TFJobInformerMixin:
    """Cache reads of :class:`TFController` (needs ``self.tfjob_lister``)."""

    def get_raw_tfjob(self, namespace: str, name: str) -> dict | None:
        return self.tfjob_lister.get(namespace, name)

    def get_tfjob_from_name(self, namespace: str, name: str) -> TFJob:
        """The decoded, validated job; raises TFJobNotFoundError or InvalidTFJobError."""
        raw = self.get_raw_tfjob(namespace, name)
        if raw is None:
            raise TFJobNotFoundError(f"{namespace}/{name}")
        return decode_tfjob(raw)

    def get_tfjob_from_key(self, key: str) -> TFJob:
        namespace, _, name = key.rpartition("/")
        return self.get_tfjob_from_name(namespace, name)
