"""Run the real ``tf-operator`` binary as a child process, for integration tests and tools.

``OperatorProcess`` starts the installed console script against a kubeconfig with the
monitoring endpoint on a free loopback port, sends its log to a file, and offers the waits a
test needs (a log line, the monitoring port, a metric). It imports nothing from the controller:
it only drives the binary, the way a user or a Deployment would.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

OPERATOR_BIN = Path(sys.executable).parent / "tf-operator"
POLL_INTERVAL_S = 0.05


class OperatorExited(RuntimeError):
    """The process ended while a caller was waiting for it to log something."""


# Every operator process not yet stopped, so a failing test's report can show their logs.
RUNNING: weakref.WeakSet[OperatorProcess] = weakref.WeakSet()


class OperatorProcess:
    """One ``tf-operator`` process; stdout and stderr (the log) go to ``log_path``."""

    def __init__(
        self, kubeconfig: str, log_path: Path, args: list[str], env: dict | None = None
    ) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        full_env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [
                str(OPERATOR_BIN),
                f"--kubeconfig={kubeconfig}",
                "--monitoring-port=0",
                "--monitoring-address=127.0.0.1",
                *args,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=full_env,
        )
        self._port: int | None = None
        RUNNING.add(self)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def json_logs(self) -> list[dict]:
        """The JSON records of the log's complete lines (one still being written is left out)."""
        lines = self.text().split("\n")[:-1]
        return [json.loads(line) for line in lines if line.startswith("{")]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_log(self, pattern: str, timeout: float = 30.0) -> re.Match:
        """The first match of ``pattern`` in the log; raises if the process exits first."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.text())
            if match:
                return match
            if not self.alive():
                raise OperatorExited(
                    f"operator exited {self.proc.returncode} before logging /{pattern}/:\n"
                    + self.text()[-3000:]
                )
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {timeout}s waiting for log /{pattern}/")
            time.sleep(POLL_INTERVAL_S)  # polling interval of a condition wait

    @property
    def port(self) -> int:
        if self._port is None:
            self._port = int(self.wait_log(r"monitoring on port: (\d+)").group(1))
        return self._port

    def http(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    def metric(self, name: str) -> float | None:
        _, body = self.http("/metrics")
        for line in body.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def signal(self, sig: int) -> None:
        if self.alive():
            self.proc.send_signal(sig)

    def stacks(self, timeout: float = 5.0) -> str:
        """Every thread's stack (the operator dumps them on SIGUSR1), for a failure report;
        empty if the process is gone or does not answer in time."""
        before = len(self.text())
        self.signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        seen = ""
        while self.alive() and time.monotonic() < deadline:
            dump = self.text()[before:]
            if "Thread 0x" in dump and dump == seen:  # the dump has stopped growing
                return dump
            seen = dump
            time.sleep(POLL_INTERVAL_S)
        return seen

    def wait_exit(self, timeout: float) -> int:
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no drain, no clean-up, as a crashed or evicted operator."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, grace: float = 10.0) -> None:
        RUNNING.discard(self)
        terminate(self.proc, grace)
        self._log.close()

    def log_tail(self, lines: int = 80) -> str:
        return "\n".join(self.text().splitlines()[-lines:])


def terminate(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
