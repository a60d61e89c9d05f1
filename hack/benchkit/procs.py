"""The process under test: our operator, a reference binary, the floor or the lean client.

Each runs as a child process with its output in a log file. CPU (user + system) and RSS are
read from /proc through psutil; a sampler thread keeps the peak RSS. Readiness is observed
in the API server: the process is ready once it holds its watches (three for an operator:
TFJobs, pods, services; as many for the lean client; one or three for the floor).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from demokit.harness import stop_process_group

OPERATOR_BIN = Path(sys.executable).parent / "tf-operator"
THREAD_CPU = Path(__file__).parent / "threadcpu"  # its sitecustomize counts thread CPU
REFERENCE_ENV = "TFOP_REFERENCE_BIN"


@dataclass(frozen=True)
class Subject:
    """What to run. ``kind`` is ``operator`` (ours), ``reference``, ``floor`` or ``lean``."""

    label: str
    kind: str
    args: tuple[str, ...] = ()
    binary: str = ""
    watches: int = 3
    extra_env: dict[str, str] = field(default_factory=dict)
    profile: str = ""  # when set: run under py-spy, raw samples to this file
    thread_cpu: str = ""  # when set: each thread's CPU seconds written to this file


def profiled(subject: Subject, path: Path) -> Subject:
    """``subject`` with ``py-spy record --gil`` attached during the measured part of a
    scenario, writing raw stacks to ``path``."""
    return replace(subject, label=f"{subject.label} (under py-spy)", profile=str(path))


def with_thread_cpu(subject: Subject, path: Path) -> Subject:
    """``subject`` (a Python process) writing each of its threads' CPU seconds to ``path``
    (``benchkit/threadcpu``); read with :meth:`MeasuredProcess.thread_cpu`."""
    return replace(subject, thread_cpu=str(path))


def operator(threadiness: int | None = None, label: str | None = None) -> Subject:
    args = () if threadiness is None else (f"--threadiness={threadiness}",)
    return Subject(
        label or "operator" + (f" --threadiness {threadiness}" if args else ""), "operator", args
    )


def reference(binary: str, threadiness: int | None = None) -> Subject:
    args = () if threadiness is None else (f"--threadiness={threadiness}",)
    return Subject("reference", "reference", args, binary=binary)


def floor(mode: str = "full", threads: int = 16) -> Subject:
    label = "floor" if mode == "full" else "floor (pods + services only)"
    watches = 3 if mode == "full" else 1  # TFJobs; pods and services in full mode
    return Subject(label, "floor", (f"--mode={mode}", f"--threads={threads}"), watches=watches)


def lean(threads: int = 8) -> Subject:
    """The lean lifecycle client (``benchkit.lean``): TFJobs, pods and services watched."""
    return Subject("lean lifecycle client", "lean", (f"--threads={threads}",))


def reference_binary() -> str | None:
    """The reference binary named by ``TFOP_REFERENCE_BIN``, when it exists."""
    path = os.environ.get(REFERENCE_ENV, "")
    return path if path and os.access(path, os.X_OK) else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _command(subject: Subject, cluster: Any, port: int) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["KUBEFLOW_NAMESPACE"] = "default"
    env.update(subject.extra_env)
    if subject.thread_cpu:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(THREAD_CPU), env.get("PYTHONPATH"))))
        env["BENCHKIT_THREAD_CPU"] = subject.thread_cpu
    monitoring = [f"--monitoring-port={port}", "--json-log-format=true"]
    if subject.kind == "operator":
        argv = [str(OPERATOR_BIN), f"--kubeconfig={cluster.kubeconfig}", *monitoring]
        argv.append("--monitoring-address=127.0.0.1")
    elif subject.kind == "reference":  # v0.5.3 has no --kubeconfig flag
        env["KUBECONFIG"] = cluster.kubeconfig
        argv = [subject.binary, *monitoring]
    elif subject.kind == "lean":
        argv = [sys.executable, "-m", "benchkit.lean", f"--kubeconfig={cluster.kubeconfig}"]
    else:
        argv = [sys.executable, "-m", "benchkit.floor", f"--server={cluster.url}"]
        external = getattr(cluster, "external", None)  # the real control plane: HTTPS
        token = external.token if external is not None else cluster.server.token
        if token:
            argv.append(f"--token={token}")
        if external is not None and external.ca_file:
            argv.append(f"--ca-file={external.ca_file}")
    return [*argv, *subject.args], env


class MeasuredProcess:
    """A started subject; ``usage`` reads its CPU and RSS from /proc."""

    def __init__(self, subject: Subject, cluster: Any, log_path: Path) -> None:
        import psutil

        self.subject = subject
        self.port = free_port()
        self.log_path = log_path
        argv, env = _command(subject, cluster, self.port)
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self._ps = psutil.Process(self.proc.pid)
        self.peak_rss = 0
        self._spy: subprocess.Popen[bytes] | None = None
        self._stop = threading.Event()
        threading.Thread(target=self._sample, name="rss-sampler", daemon=True).start()

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            with contextlib.suppress(Exception):
                self.peak_rss = max(self.peak_rss, self._ps.memory_info().rss)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def cpu(self) -> float:
        """User + system CPU seconds so far (children included: there are none)."""
        times = self._ps.cpu_times()
        return times.user + times.system

    def thread_cpu(self, timeout: float = 5.0) -> dict[str, float]:
        """CPU seconds by thread name, from the subject's first write of them after this call
        ({} unless it was started ``with_thread_cpu``, or without such a write within
        ``timeout``)."""
        if not self.subject.thread_cpu:
            return {}
        path = Path(self.subject.thread_cpu)
        asked, deadline = time.time_ns(), time.monotonic() + timeout
        while time.monotonic() < deadline and self.alive():
            try:
                if path.stat().st_mtime_ns > asked:
                    seconds = json.loads(path.read_text())
                    return {str(k): float(v) for k, v in seconds.items()}
            except (OSError, ValueError):
                pass  # not written yet
            time.sleep(0.05)
        return {}

    def usage(self) -> dict[str, float]:
        """RSS and peak RSS (MiB), CPU seconds and thread count, now."""
        try:
            rss = self._ps.memory_info().rss
            cpu = self.cpu()
            threads = self._ps.num_threads()
        except Exception:  # noqa: BLE001 - the process is gone
            return {}
        self.peak_rss = max(self.peak_rss, rss)
        return {
            "rss_mib": round(rss / 2**20, 1),
            "peak_rss_mib": round(self.peak_rss / 2**20, 1),
            "cpu_s": round(cpu, 3),
            "threads": threads,
        }

    def wait_ready(self, cluster: Any, watches_before: int, timeout: float = 90) -> float:
        """Block until the subject holds its watches; returns the seconds it took."""
        deadline = time.monotonic() + timeout
        while cluster.registry.watch_count() < watches_before + self.subject.watches:
            if not self.alive():
                raise RuntimeError(f"{self.subject.label} exited early:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.subject.label} did not start watching in {timeout}s")
            time.sleep(0.02)
        return time.monotonic() - self.started

    def wait_settled(self, window: float = 2.0, timeout: float = 120, slack: float = 0.03) -> float:
        """Block until the process uses at most ``slack`` CPU seconds over ``window`` seconds
        (its caches are filled and it is idle); returns its CPU seconds then."""
        deadline = time.monotonic() + timeout
        last = self.cpu()
        while time.monotonic() < deadline:
            time.sleep(window)
            now = self.cpu()
            if now - last <= slack:
                return now
            last = now
        return last

    def start_profile(self) -> None:
        """Attach ``py-spy record --gil`` (samples of threads holding the GIL: Python running,
        not waiting) writing raw stacks to ``subject.profile``; no-op when not profiled."""
        if not self.subject.profile or self._spy is not None:
            return
        spy = Path(sys.executable).parent / "py-spy"
        self._spy = subprocess.Popen(
            [str(spy), "record", "--gil", "--nolineno", "--nonblocking", "-r", "250",
             "-f", "raw", "-o", self.subject.profile, "--pid", str(self.proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def stop_profile(self) -> None:
        """Stop py-spy; it writes its samples when interrupted."""
        spy, self._spy = self._spy, None
        if spy is None:
            return
        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(30)
        except subprocess.TimeoutExpired:
            spy.kill()
            spy.wait(5)

    def scrape(self) -> str:
        with urllib.request.urlopen(self.metrics_url, timeout=5) as reply:
            body: bytes = reply.read()
            return body.decode(errors="replace")

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float = 10.0) -> None:
        self._stop.set()
        self.stop_profile()
        stop_process_group(self.proc, grace)
        self._log.close()


def start(
    stack: contextlib.ExitStack, subject: Subject, cluster: Any, workdir: Path, name: str
) -> tuple[MeasuredProcess, float]:
    """Start ``subject`` against ``cluster`` and wait until it is ready; stopped when
    ``stack`` unwinds. Returns the process and the seconds it took to get ready."""
    before = cluster.registry.watch_count()
    process = MeasuredProcess(subject, cluster, workdir / f"{name}.log")
    stack.callback(process.stop)
    ready_s = process.wait_ready(cluster, before)
    return process, ready_s
