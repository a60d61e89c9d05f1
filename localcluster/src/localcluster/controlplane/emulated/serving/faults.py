"""Fault injection for reliability tests: error rates, latency, dropped watches, compaction.

``Faults`` holds the standing settings (``error_rate`` in [0, 1], ``error_code`` 429, 500 or
503, ``retry_after`` seconds, ``latency_ms`` up to a minute) consulted on every non-admin request, and performs the one-shot
actions (``drop_watches``, ``compact``) on the registry when they are applied. The HTTP admin
endpoint ``/_localcluster/faults`` reads (GET) and updates (POST) it with the same JSON keys.

``match`` narrows the standing faults to some requests: ``{"user": name, "methods": [...],
"path_prefix": "/api/..."}``, each key optional (``{}``: every request). A test uses it to
make one client's requests of one object fail, e.g. only the leader's renewals of its lock.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from localcluster.apimachinery import errors

if TYPE_CHECKING:
    from localcluster.controlplane.emulated.registry import Registry


MAX_LATENCY_MS = 60_000.0  # beyond a minute every client times out: not a fault worth injecting
MAX_RETRY_AFTER = 3600


def _number(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name} must be within [{low:g}, {high:g}]")
    return float(value)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false")
    return value


def _error_code(value: Any) -> int:
    if isinstance(value, bool) or value not in (429, 500, 503):
        raise ValueError("error_code must be 429, 500 or 503")
    return int(value)


def _retry_after(value: Any) -> int:
    number = _number(value, "retry_after", 0, MAX_RETRY_AFTER)
    if number != int(number):
        raise ValueError("retry_after must be a whole number of seconds")
    return int(number)


@dataclass(frozen=True)
class Match:
    """Which requests the standing faults apply to (empty fields match everything)."""

    user: str = ""
    methods: tuple[str, ...] = ()
    path_prefix: str = ""

    def __call__(self, user: str, method: str, path: str) -> bool:
        return (
            (not self.user or user == self.user)
            and (not self.methods or method in self.methods)
            and path.startswith(self.path_prefix)
        )

    def to_dict(self) -> dict[str, Any]:
        return {"user": self.user, "methods": list(self.methods), "path_prefix": self.path_prefix}


def _match(value: Any) -> Match:
    if not isinstance(value, dict):
        raise TypeError("match must be an object")
    unknown = set(value) - {"user", "methods", "path_prefix"}
    if unknown:
        raise ValueError(f"unknown match keys {sorted(unknown)}")
    user, methods, prefix = (
        value.get("user", ""),
        value.get("methods", []),
        value.get("path_prefix", ""),
    )
    if not isinstance(user, str) or not isinstance(prefix, str):
        raise TypeError("match.user and match.path_prefix must be strings")
    if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
        raise TypeError("match.methods must be a list of strings")
    return Match(user, tuple(m.upper() for m in methods), prefix)


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "error_rate": lambda v: _number(v, "error_rate", 0.0, 1.0),
    "error_code": _error_code,
    "retry_after": _retry_after,
    "latency_ms": lambda v: _number(v, "latency_ms", 0.0, MAX_LATENCY_MS),
    "drop_watches": lambda v: _flag(v, "drop_watches"),
    "compact": lambda v: _flag(v, "compact"),
    "match": _match,
}


class Faults:
    def __init__(self, registry: Registry, seed: int | None = None, **settings: Any) -> None:
        self._registry = registry
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.error_rate = 0.0
        self.error_code = 500
        self.retry_after = 1
        self.latency_ms = 0.0
        self.match = Match()
        self.injected = 0
        if settings:
            self.apply(settings)

    def apply(self, settings: dict[str, Any]) -> dict[str, Any]:
        """Validate every setting first (400 for unknown keys, wrong types, non-finite or
        out-of-range values), then update them and run the one-shot actions."""
        if not isinstance(settings, dict):
            raise errors.bad_request("fault settings must be a JSON object")
        unknown = set(settings) - set(_CHECKS)
        if unknown:
            raise errors.bad_request(f"unknown fault settings: {sorted(unknown)}")
        try:
            values = {key: _CHECKS[key](value) for key, value in settings.items()}
        except (TypeError, ValueError) as e:
            raise errors.bad_request(f"invalid fault settings: {e}") from e
        with self._lock:
            for key in ("error_rate", "error_code", "retry_after", "latency_ms", "match"):
                if key in values:
                    setattr(self, key, values[key])
        result = self.to_dict()
        if values.get("drop_watches"):
            result["dropped_watches"] = self._registry.drop_watches()
        if values.get("compact"):
            self._registry.compact()
            result["compacted_at"] = str(self._registry.resource_version)
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "error_rate": self.error_rate,
            "error_code": self.error_code,
            "retry_after": self.retry_after,
            "latency_ms": self.latency_ms,
            "match": self.match.to_dict(),
            "injected": self.injected,
        }

    def before_request(self, user: str = "", method: str = "", path: str = "") -> None:
        """For a request that ``match`` selects: sleep for the configured latency, then maybe
        raise the configured error."""
        if not self.match(user, method, path):
            return
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
