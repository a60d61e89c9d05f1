"""The contract between a kubelet and its container runtime.

A runtime starts one container attempt at a time and reports back through the
``RuntimeCallbacks`` it was attached to: ``container_started`` once the
container runs and ``container_exited`` once it ends, each tagged with the
attempt's container ID so late reports about an older attempt are ignored.
``stop_pod`` must eventually report an exit for every running container of
the pod. The kubelet owns restart decisions and status; runtimes own only
timing (simulated) or processes (process).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol

from localcluster.kubelet.podstatus import PodRecord


class RuntimeCallbacks(Protocol):
    def container_started(self, pod_key: str, container: str, container_id: str) -> None: ...

    def container_exited(
        self,
        pod_key: str,
        container: str,
        container_id: str,
        exit_code: int,
        reason: str | None = None,
        message: str = "",
    ) -> None: ...


class LogUnavailable(LookupError):
    """The container has no log to give yet (not started), or no previous instance: the
    kubelet answers 400 with the message, as the real kubelet does."""


class LogRequest:
    """The parameters of GET pods/{name}/log that a runtime has to honour."""

    def __init__(
        self,
        follow: bool = False,
        tail_lines: int | None = None,
        limit_bytes: int | None = None,
        previous: bool = False,
        stop_event: threading.Event | None = None,
        timestamps: bool = False,
        since_time: float | None = None,
    ) -> None:
        self.follow = follow
        self.tail_lines = tail_lines
        self.limit_bytes = limit_bytes
        self.previous = previous
        self.stop_event = stop_event or threading.Event()
        self.timestamps = timestamps  # prefix each line with its RFC 3339 time and a space
        self.since_time = since_time  # only lines written at or after this (epoch seconds)


def log_timestamp(when: float) -> bytes:
    """A log line's time as the kubelet prefixes it: RFC 3339 with nanoseconds, UTC."""
    whole = int(when)
    nanos = int(round((when - whole) * 1e9))
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return f"{stamp}.{nanos:09d}Z".encode()


def render_lines(
    lines: list[tuple[float, bytes]],
    since_time: float | None,
    tail_lines: int | None,
    timestamps: bool,
) -> bytes:
    """Timed lines (each ending in a newline, or the last one unfinished) as GET containerLogs
    answers, before ``limitBytes``: those since ``since_time``, the last ``tail_lines`` of
    them, each prefixed with its time when ``timestamps``."""
    if since_time is not None:
        lines = [line for line in lines if line[0] >= since_time]
    if tail_lines is not None:
        lines = lines[-tail_lines:] if tail_lines > 0 else []
    if timestamps:
        return b"".join(log_timestamp(when) + b" " + text for when, text in lines)
    return b"".join(text for _, text in lines)


class ContainerRuntime:
    """Base class: the operations a kubelet calls; all must be non-blocking."""

    name = "base"

    def attach(self, callbacks: RuntimeCallbacks) -> None:
        self.callbacks = callbacks

    def start_container(self, record: PodRecord, spec: dict[str, Any], attempt: int) -> None:
        raise NotImplementedError

    def stop_pod(self, record: PodRecord, grace_seconds: float) -> None:
        raise NotImplementedError

    def stop_container(self, record: PodRecord, container: str, grace_seconds: float) -> None:
        """Stop one container (a failed liveness probe); its exit is reported as usual."""

    def remove_pod(self, record: PodRecord) -> None:
        """Forget a pod whose object is gone (free logs, cancel timers)."""

    def logs(self, record: PodRecord, container: str, request: LogRequest) -> Iterator[bytes]:
        return iter(())

    def close(self) -> None:
        """Stop everything at once (cluster shutdown)."""
