"""Container restart back-off, as the kubelet keeps it (``CrashLoopBackOff``).

The kubelet keys one back-off entry per container of a pod. A container that exits with no
entry (or whose entry is stale: last restarted more than twice the maximum ago) restarts at
once and its entry starts at the initial delay; while an entry is fresh, the next restart waits
that long after the exit, and each restart doubles the delay up to the maximum. So a container
that keeps crashing restarts after 0, d, 2d, 4d ... capped at max (upstream: d = 10 s, max =
5 min; here both are settings so tests stay fast). The wait also applies to containers that
exit 0 under ``restartPolicy: Always``, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_INITIAL = 0.5
DEFAULT_MAX = 15.0  # the upstream ratio (10 s -> 300 s) applied to the initial delay


@dataclass
class _Entry:
    delay: float
    last_update: float


class RestartBackOff:
    def __init__(self, initial: float, maximum: float, clock: Callable[[], float]) -> None:
        self.initial = initial
        self.maximum = max(maximum, initial)
        self._clock = clock
        self._entries: dict[str, _Entry] = {}

    def _fresh(self, entry: _Entry | None, at: float) -> bool:
        return entry is not None and at - entry.last_update <= 2 * self.maximum

    def wait(self, key: str, exited_at: float) -> float:
        """Seconds after ``exited_at`` before the container may start again (0: at once)."""
        entry = self._entries.get(key)
        return entry.delay if entry is not None and self._fresh(entry, exited_at) else 0.0

    def restarted(self, key: str) -> None:
        """Record a restart now: start or double the entry's delay."""
        now = self._clock()
        entry = self._entries.get(key)
        if entry is None or not self._fresh(entry, now):
            self._entries[key] = _Entry(self.initial, now)
            return
        entry.delay = min(entry.delay * 2, self.maximum)
        entry.last_update = now

    def forget(self, prefix: str) -> None:
        """Drop the entries of a pod (keys start with its uid)."""
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for the values back-off messages show."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text
