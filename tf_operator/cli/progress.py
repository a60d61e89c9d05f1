"""A job's progress while ``tfjob`` waits for it: live lines on a terminal, plain lines otherwise.

On a TTY the view owns a block of lines at the bottom of the screen, one for the job and one
per replica type (``active/succeeded/failed`` and the time elapsed), and redraws it in place:
on every change the wait reports, and once a second from a ticker thread so the clock moves.
Anywhere else (a pipe, a CI log) it prints one plain line each time the state or a count
changes, never a control character.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from tf_operator.sdk.conditions import job_state, replica_statuses
from tf_operator.sdk.kinds import replica_specs
from tf_operator.sdk.summary import human_duration

TICK_SECONDS = 1.0
_UP_AND_CLEAR = "\033[{n}F"  # cursor to the start of the line n lines up
_CLEAR_LINE = "\033[2K"


def replica_lines(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(replica type, "active N  succeeded N  failed N")`` in the spec's order."""
    counts = replica_statuses(job)
    types = list(replica_specs(job))
    types += [t for t in counts if t not in types]
    empty = {"active": 0, "succeeded": 0, "failed": 0}
    return [(t, "  ".join(f"{k} {v}" for k, v in counts.get(t, empty).items())) for t in types]


class ProgressView:
    """Call :meth:`update` with each new version of the job and :meth:`close` at the end."""

    def __init__(
        self,
        out: TextIO,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self.clock = clock
        self.started = clock()
        self._job: Mapping[str, Any] | None = None
        self._drawn = 0
        self._last_plain = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.tty:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def update(self, job: Mapping[str, Any]) -> None:
        with self._lock:
            self._job = job
            if self.tty:
                self._redraw()
            else:
                self._plain()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.tty and self._job is not None:
                self._redraw()

    def __enter__(self) -> ProgressView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lines(self) -> list[str]:
        job = self._job or {}
        meta = job.get("metadata") or {}
        elapsed = human_duration(self.clock() - self.started)
        kind = job.get("kind") or "TFJob"
        head = f"{kind} {meta.get('namespace')}/{meta.get('name')}: {job_state(job)} ({elapsed})"
        width = max([len(t) for t, _ in replica_lines(job)] + [0])
        return [head] + [f"  {t.ljust(width)}  {c}" for t, c in replica_lines(job)]

    def _redraw(self) -> None:
        lines = self.lines()
        text = _UP_AND_CLEAR.format(n=self._drawn) if self._drawn else ""
        text += "".join(_CLEAR_LINE + line + "\n" for line in lines)
        if len(lines) < self._drawn:  # fewer lines than last time: blank the rest
            text += (_CLEAR_LINE + "\n") * (self._drawn - len(lines))
            lines += [""] * (self._drawn - len(lines))
        self.out.write(text)
        self.out.flush()
        self._drawn = len(lines)

    def _plain(self) -> None:
        job = self._job or {}
        summary = f"{job_state(job)} | " + " | ".join(f"{t}: {c}" for t, c in replica_lines(job))
        if summary != self._last_plain:
            self._last_plain = summary
            elapsed = human_duration(self.clock() - self.started)
            self.out.write(f"[{elapsed}] {summary}\n")
            self.out.flush()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            with self._lock:
                if self._job is not None:
                    self._redraw()
