"""Fault injection for reliability tests: error rates, latency, dropped watches, compaction.

``Faults`` holds the standing settings (``error_rate``, ``error_code`` 500 or 429,
``retry_after``, ``latency_ms``) consulted on every non-admin request, and performs the one-shot
actions (``drop_watches``, ``compact``) on the registry when they are applied. The HTTP admin
endpoint ``/_localcluster/faults`` reads (GET) and updates (POST) it with the same JSON keys.
"""

from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING, Any

from . import errors

if TYPE_CHECKING:
    from .registry import Registry


class Faults:
    def __init__(self, registry: Registry, seed: int | None = None, **settings: Any) -> None:
        self._registry = registry
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.error_rate = 0.0
        self.error_code = 500
        self.retry_after = 1
        self.latency_ms = 0.0
        self.injected = 0
        if settings:
            self.apply(settings)

    def apply(self, settings: dict[str, Any]) -> dict[str, Any]:
        """Update settings and run one-shot actions; unknown keys or bad values raise 400."""
        known = {"error_rate", "error_code", "retry_after", "latency_ms", "drop_watches", "compact"}
        unknown = set(settings) - known
        if unknown:
            raise errors.bad_request(f"unknown fault settings: {sorted(unknown)}")
        try:
            with self._lock:
                if "error_rate" in settings:
                    rate = float(settings["error_rate"])
                    if not 0.0 <= rate <= 1.0:
                        raise ValueError("error_rate must be within [0, 1]")
                    self.error_rate = rate
                if "error_code" in settings:
                    code = int(settings["error_code"])
                    if code not in (429, 500, 503):
                        raise ValueError("error_code must be 429, 500 or 503")
                    self.error_code = code
                if "retry_after" in settings:
                    self.retry_after = max(0, int(settings["retry_after"]))
                if "latency_ms" in settings:
                    self.latency_ms = max(0.0, float(settings["latency_ms"]))
        except (TypeError, ValueError) as e:
            raise errors.bad_request(f"invalid fault settings: {e}") from e
        result = self.to_dict()
        if settings.get("drop_watches"):
            result["dropped_watches"] = self._registry.drop_watches()
        if settings.get("compact"):
            self._registry.compact()
            result["compacted_at"] = str(self._registry.resource_version)
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "error_rate": self.error_rate,
            "error_code": self.error_code,
            "retry_after": self.retry_after,
            "latency_ms": self.latency_ms,
            "injected": self.injected,
        }

    def before_request(self) -> None:
        """Sleep for the configured latency, then maybe raise the configured error."""
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000.0)
        if self.error_rate and self._random.random() < self.error_rate:
            self.injected += 1
            if self.error_code == 429:
                raise errors.too_many_requests(self.retry_after)
            if self.error_code == 503:
                raise errors.StatusError(
                    503,
                    "ServiceUnavailable",
                    "the server is currently unable to handle the request (injected)",
                    retry_after=self.retry_after,
                )
            raise errors.internal_error("injected fault")
