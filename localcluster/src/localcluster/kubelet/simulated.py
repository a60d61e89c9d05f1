"""Simulated container runtime: containers are timers, driven by pod annotations.

Annotations (all optional; a ``.<container>`` suffix targets one container and
wins over the pod-wide key):

- ``localcluster.tf-operator.io/start-seconds``: delay from binding to Running
  (default: the runtime's ``start_delay``).
- ``localcluster.tf-operator.io/run-seconds``: how long each attempt runs; absent
  means it runs until the pod is deleted.
- ``localcluster.tf-operator.io/exit-code``: exit code of an attempt, or a comma
  list indexed by restart count, the last entry repeating (``"1,0"``: fail once,
  then succeed).

Every pending start or finish is one entry in the kubelet's ``TimerQueue``: no
thread per pod. Stopping a pod ends its containers with exit code 143 (SIGTERM).

An annotation that does not parse (``run-seconds: soon``, a negative or infinite time, an
exit code outside 0..255) fails the attempt the way a bad container config fails on a real
kubelet: reason ``CreateContainerConfigError``, a ``Failed`` Warning event naming the
annotation, and restarts as the pod's restart policy says; never a pod stuck in
ContainerCreating.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from localcluster.kubelet.podstatus import PodRecord
from localcluster.kubelet.runtime import ContainerRuntime, LogRequest, render_lines
from localcluster.kubelet.timers import TimerHandle, TimerQueue

ANNOTATION_PREFIX = "localcluster.tf-operator.io/"
START_SECONDS = ANNOTATION_PREFIX + "start-seconds"
RUN_SECONDS = ANNOTATION_PREFIX + "run-seconds"
EXIT_CODE = ANNOTATION_PREFIX + "exit-code"
SIGTERM_EXIT = 143


def annotation(pod: dict[str, Any], key: str, container: str) -> str | None:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(f"{key}.{container}")
    return value if value is not None else annotations.get(key)


class BadAnnotation(ValueError):
    """A simulation annotation that does not parse; the text names it."""


def exit_code_for(pod: dict[str, Any], container: str, attempt: int) -> int:
    text = annotation(pod, EXIT_CODE, container)
    if not text:
        return 0
    try:
        codes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        codes = [-1]
    if not all(0 <= code <= 255 for code in codes):
        raise BadAnnotation(
            f"invalid annotation {EXIT_CODE}: {text!r} is not a comma list of exit codes 0-255"
        )
    return codes[min(attempt, len(codes) - 1)] if codes else 0


def seconds(pod: dict[str, Any], key: str, container: str, default: float | None) -> float | None:
    text = annotation(pod, key, container)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        raise BadAnnotation(f"invalid annotation {key}: {text!r} is not a number of seconds >= 0")
    return value


def _or(read: Callable[[], Any], fallback: Any) -> Any:
    """``read()``, or ``fallback`` when an annotation edited since admission no longer parses."""
    try:
        return read()
    except BadAnnotation:
        return fallback


class SimulatedRuntime(ContainerRuntime):
    """Containers that start after a delay and exit when their annotations say."""

    name = "simulated"

    def __init__(
        self, timers: TimerQueue, start_delay: float = 0.5, default_run_seconds: float | None = None
    ) -> None:
        self._timers = timers
        self._start_delay = start_delay
        self._default_run_seconds = default_run_seconds
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], TimerHandle] = {}  # (pod key, container) -> timer
        self._running: dict[tuple[str, str], str] = {}  # (pod key, container) -> container id
        self._log: dict[tuple[str, str], list[tuple[float, bytes]]] = {}

    def start_container(self, record: PodRecord, spec: dict[str, Any], attempt: int) -> None:
        name = spec["name"]
        key = (record.key, name)
        container_id = f"simulated://{record.uid}-{name}-{attempt}"
        try:  # read every annotation now: a bad one fails this attempt, not a timer thread
            delay = seconds(record.pod, START_SECONDS, name, self._start_delay) or 0.0
            first_run_for = seconds(record.pod, RUN_SECONDS, name, self._default_run_seconds)
            first_code = exit_code_for(record.pod, name, attempt)
        except BadAnnotation as err:
            self._fail(key, container_id, str(err))
            return

        def started() -> None:
            with self._lock:
                self._running[key] = container_id
                self._log.setdefault(key, []).append(
                    _line(f"simulated container {name} attempt {attempt} started")
                )
                # the pod's annotations as they are now (an edit since admission counts)
                run_for = _or(
                    lambda: seconds(record.pod, RUN_SECONDS, name, self._default_run_seconds),
                    first_run_for,
                )
                if run_for is not None:
                    self._pending[key] = self._timers.call_later(run_for, finished)
                else:
                    self._pending.pop(key, None)
            self.callbacks.container_started(record.key, name, container_id)

        def finished() -> None:
            code = _or(lambda: exit_code_for(record.pod, name, attempt), first_code)
            self._exit(key, container_id, code)

        with self._lock:
            self._cancel(key)
            self._pending[key] = self._timers.call_later(delay, started)

    def _fail(self, key: tuple[str, str], container_id: str, message: str) -> None:
        """Report a config error for this attempt from the timer thread (never re-entrantly)."""

        def report() -> None:
            with self._lock:
                self._pending.pop(key, None)
                self._log.setdefault(key, []).append(
                    _line(f"simulated container {key[1]}: {message}")
                )
            self.callbacks.container_exited(
                key[0], key[1], container_id, 1, "CreateContainerConfigError", message
            )

        with self._lock:
            self._cancel(key)
            self._pending[key] = self._timers.call_later(0, report)

    def _exit(self, key: tuple[str, str], container_id: str, code: int) -> None:
        with self._lock:
            if self._running.get(key) != container_id:
                return
            del self._running[key]
            self._pending.pop(key, None)
            self._log.setdefault(key, []).append(
                _line(f"simulated container {key[1]} exited with code {code}")
            )
        self.callbacks.container_exited(key[0], key[1], container_id, code)

    def _cancel(self, key: tuple[str, str]) -> None:
        handle = self._pending.pop(key, None)
        if handle is not None:
            handle.cancel()

    def stop_pod(self, record: PodRecord, grace_seconds: float) -> None:
        with self._lock:
            keys = [k for k in set(self._pending) | set(self._running) if k[0] == record.key]
            for key in keys:
                self._cancel(key)
            running = [(k, self._running[k]) for k in keys if k in self._running]
        for key, container_id in running:
            self._exit(key, container_id, SIGTERM_EXIT)

    def remove_pod(self, record: PodRecord) -> None:
        self.stop_pod(record, 0)
        with self._lock:
            for key in [k for k in self._log if k[0] == record.key]:
                del self._log[key]

    def logs(self, record: PodRecord, container: str, request: LogRequest) -> Iterator[bytes]:
        with self._lock:
            lines = list(self._log.get((record.key, container), []))
        data = render_lines(lines, request.since_time, request.tail_lines, request.timestamps)
        if request.limit_bytes is not None:
            data = data[: request.limit_bytes]
        return iter([data] if data else [])

    def close(self) -> None:
        with self._lock:
            for key in list(self._pending):
                self._cancel(key)
            self._running.clear()


def _line(text: str) -> tuple[float, bytes]:
    """A log line written now (wall-clock time, as a container runtime stamps it)."""
    return time.time(), (text + "\n").encode()
