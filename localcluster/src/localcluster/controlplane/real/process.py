"""One child process of the real control plane: started, probed until healthy, stopped.

Each process runs in a session of its own with its output in a log file of the plane's state
directory; ``wait_healthy`` polls its health endpoint (never a fixed sleep) and fails at once,
with the log's tail, if the process dies first; ``stop`` sends SIGTERM, then SIGKILL to the
whole process group after a grace period, so nothing it started outlives it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from localcluster.lifeline import bound_to_parent

logger = logging.getLogger(__name__)

# Poll interval of a health probe, and the grace a process gets between SIGTERM and SIGKILL.
PROBE_INTERVAL = 0.1
STOP_GRACE_SECONDS = 10.0


class ProcessFailed(RuntimeError):
    """A control-plane process exited or never became healthy."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class HealthProbe:
    """An HTTP(S) endpoint that answers 200 once the process is ready."""

    url: str
    token: str | None = None
    ca_file: str | None = None  # None with https: the process's own self-signed certificate

    def ok(self) -> bool:
        request = urllib.request.Request(self.url)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        context: ssl.SSLContext | None = None
        if self.url.startswith("https"):
            context = ssl.create_default_context(cafile=self.ca_file)
            if self.ca_file is None:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as answer:
                return int(answer.status) == 200
        except (urllib.error.URLError, OSError):
            return False


@dataclass
class ManagedProcess:
    """``name`` run as ``argv`` with its output in ``log_path``."""

    name: str
    argv: list[str]
    log_path: Path
    probe: HealthProbe | None = None
    env: dict[str, str] = field(default_factory=dict)
    _process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        logger.debug("starting %s: %s", self.name, " ".join(self.argv))
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                bound_to_parent(self.argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **self.env},
            )

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self._process is None or self._process.poll() is not None:
                raise ProcessFailed(f"{self.name} exited before it was ready:\n{self.log_tail()}")
            if self.probe is None or self.probe.ok():
                return
            if time.monotonic() >= deadline:
                raise ProcessFailed(
                    f"{self.name} not healthy after {timeout:.0f} s at {self.probe.url}:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(PROBE_INTERVAL)

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            self._signal_group(process, signal.SIGTERM)
            try:
                process.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                logger.warning(
                    "%s ignored SIGTERM for %.0f s; killing it", self.name, STOP_GRACE_SECONDS
                )
        # whatever else the process group holds goes too
        self._signal_group(process, signal.SIGKILL)
        process.wait()

    @staticmethod
    def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])
