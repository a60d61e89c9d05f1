"""A token bucket read against an injectable clock.

The bucket starts full (`burst` tokens) and refills at `qps` tokens per second up to
`burst`. `reserve` always takes a token, letting the balance go negative, and returns how
long the caller must wait for its token to exist (the semantics of Go's
`rate.Limiter.Reserve().Delay()`); `try_accept` takes a token only if one is available
now (`flowcontrol.RateLimiter.TryAccept`).
"""

from __future__ import annotations

import threading

from tf_operator.k8s.clock import REAL_CLOCK, Clock


class TokenBucket:
    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError("qps must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.qps = float(qps)
        self.burst = burst
        self._clock = clock or REAL_CLOCK
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = self._clock.monotonic()

    def _advance(self) -> None:
        now = self._clock.monotonic()
        elapsed = now - self._last
        if elapsed > 0:
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        self._last = max(self._last, now)

    def reserve(self) -> float:
        """Take one token; return the seconds until it is available (0 when now)."""
        with self._lock:
            self._advance()
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_accept(self) -> bool:
        """Take one token if one is available now."""
        with self._lock:
            self._advance()
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False
