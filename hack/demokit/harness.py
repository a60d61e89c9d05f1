"""What the demos share: the example, their child processes, the local cluster, waiting.

``tfjob`` (the job on a host-process operator), ``incluster`` (the operator deployed from
``manifests/``) and their tests use these; nothing here prints but ``start_cluster``'s one line
and ``run_steps``'s verdict on a failed or interrupted demo. ``gang`` and ``benchkit`` stop
their children with ``stop_process_group`` too.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from localcluster.lifeline import bound_to_parent

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "examples/v1/local-dist-training"
EXAMPLES = {False: EXAMPLE_DIR / "tfjob.yaml", True: EXAMPLE_DIR / "tfjob-exitcode.yaml"}
CRD_FILE = ROOT / "manifests/base/crd.yaml"
BIN = Path(sys.executable).parent
CONTAINER_CODE_DIR = "/opt/train"


class DemoError(Exception):
    """A step failed; the message says which and why."""


# ------------------------------------------------------------------ processes


def stop_process_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the session a child leads (``start_new_session``), SIGKILL after ``grace``
    seconds: its own children go with it."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


class Background:
    """A child process whose output goes to a log file; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, name: str, argv: list[str], log_path: Path, stdout_pipe: bool = False):
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            bound_to_parent(argv),
            stdout=subprocess.PIPE if stdout_pipe else self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us only; we stop children in order
        )

    def read_line(self, timeout: float) -> str:
        """The next stdout line (for processes started with ``stdout_pipe``)."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise DemoError(f"{self.name} printed nothing for {timeout:.0f}s (see {self.log_path})")
        return self.proc.stdout.readline().decode().strip()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, grace: float) -> None:
        stop_process_group(self.proc, grace)
        self._log.close()

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def run_steps(steps: Callable[[list[Background]], int], workdir: Path, keep: bool) -> int:
    """Run a demo's ``steps`` (they append what they start), then stop those processes, last
    first, however the steps end (SIGTERM too); the work directory with its logs stays when the
    demo failed after starting something, or with ``keep``. Returns the exit code."""
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    started: list[Background] = []
    code = 1
    try:
        code = steps(started)
    except DemoError as err:
        print(f"\ndemo failed: {err}", file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        code = 130
    finally:
        for proc in reversed(started):  # dashboard and operator first, then the cluster
            proc.stop(grace=10)
        if code != 0 and started:
            print(f"\nlogs kept in {workdir}", file=sys.stderr)
        elif not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return code


class WholeLines(io.TextIOBase):
    """A text stream that writes each thread's output to ``target`` a whole line at a time.

    ``print`` writes its text and its newline in two calls, so lines printed by two threads at
    once (the job's progress and a demo step running beside it) could otherwise be spliced."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._pending = threading.local()

    def write(self, text: str) -> int:
        pending: str = getattr(self._pending, "text", "") + text
        complete, newline, rest = pending.rpartition("\n")
        self._pending.text = rest
        if newline:
            with self._lock:
                self._target.write(complete + newline)
                self._target.flush()
        return len(text)

    def flush(self) -> None:
        """Also writes this thread's unfinished line (a prompt before ``input``)."""
        rest: str = getattr(self._pending, "text", "")
        self._pending.text = ""
        with self._lock:
            self._target.write(rest)
            self._target.flush()


def run_timed(steps: Callable[[Path, list[Background]], int], prefix: str, keep: bool) -> int:
    """A demo's ``main``: its ``steps`` in a fresh work directory (:func:`run_steps`), then the
    verdict and how long the whole demo took."""
    if not isinstance(sys.stdout, WholeLines):
        sys.stdout = WholeLines(sys.stdout)
    begin = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    code = run_steps(lambda started: steps(workdir, started), workdir, keep)
    elapsed = time.monotonic() - begin
    if code == 0:
        print(f"\njob Succeeded; demo took {elapsed:.1f}s")
    else:
        print(f"\ndemo exits with {code} after {elapsed:.1f}s", file=sys.stderr)
    return code


def preflight() -> None:
    missing = []
    for module, what in (
        ("localcluster.cli", "the local cluster"),
        ("tf_operator.controller.v1.tensorflow.controller", "the TFJob controller"),
        ("tf_operator.k8s.informers", "the informers"),
    ):
        try:
            __import__(module)
        except ImportError as err:
            missing.append(f"{what} ({module}: {err})")
    for script in ("tf-operator", "tf-operator-localcluster"):
        if not (BIN / script).exists():
            missing.append(f"the {script} console script (run `make venv`)")
    if missing:
        raise DemoError("cannot run the demo yet, missing: " + "; ".join(missing))


# The local cluster's command reads its control plane from this variable (click's envvar).
CONTROL_PLANE_ENV = "LOCALCLUSTER_CONTROL_PLANE"


def use_real_control_plane() -> None:
    """Build the real control plane now if needed (its progress on this terminal), then run
    every local cluster this process starts on it."""
    build = subprocess.run(
        [str(BIN / "python"), "-m", "localcluster.controlplane.real"],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if build.returncode != 0:
        raise DemoError("the real control plane is not available (see above)")
    os.environ[CONTROL_PLANE_ENV] = "real"


def start_cluster(workdir: Path, extra_args: tuple[str, ...] = ()) -> tuple[Background, str]:
    """Start ``tf-operator-localcluster`` with the process kubelet (``extra_args``: more of its
    options, e.g. node pools); returns it and its kubeconfig's path."""
    kubeconfig = workdir / "kubeconfig"
    cluster = Background(
        "local cluster",
        [
            str(BIN / "tf-operator-localcluster"),
            "--kubelet=process",
            "--port=0",
            f"--kubeconfig={kubeconfig}",
            f"--state-dir={workdir / 'cluster-state'}",
            *extra_args,
        ],
        workdir / "cluster.log",
        stdout_pipe=True,
    )
    line = cluster.read_line(timeout=60)
    if not line.startswith("ready "):
        raise DemoError(f"local cluster did not start: {line!r}\n{cluster.tail()}")
    _, url, path = line.split()
    plane = os.environ.get(CONTROL_PLANE_ENV, "emulated")
    print(f"local cluster ready at {url} (control plane: {plane}, kubelet: process)")
    return cluster, path


def wait_until(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    last: Any = None
    while time.monotonic() < deadline:
        try:
            result = fn()
            if result:
                return result
        except Exception as err:  # noqa: BLE001 - not ready yet
            last = err
        pause.wait(0.2)
    raise DemoError(f"timed out waiting for {what} ({last})")


def localise(
    job: dict[str, Any],
    workdir: Path,
    example_dir: Path = EXAMPLE_DIR,
    specs_field: str = "tfReplicaSpecs",
) -> dict[str, Any]:
    """Run the example's containers (its replica specs under ``spec.<specs_field>``) as local
    processes of this interpreter, in ``example_dir``."""
    job = copy.deepcopy(job)
    for spec in job["spec"][specs_field].values():
        pod = spec["template"]["spec"]
        volumes = {v["name"] for v in pod.get("volumes", []) if "configMap" in v or "hostPath" in v}
        pod["volumes"] = [v for v in pod.get("volumes", []) if v["name"] not in volumes]
        if not pod["volumes"]:
            del pod["volumes"]
        for container in pod["containers"]:
            if container.get("workingDir") == CONTAINER_CODE_DIR:
                container["workingDir"] = str(example_dir)
            if container.get("command", [""])[0] in ("python", "python3"):
                container["command"] = [sys.executable, "-u", *container["command"][1:]]
            container["args"] = [
                f"--crash-once-marker={workdir / 'crash-once-marker'}"
                if a.startswith("--crash-once-marker=")
                else a
                for a in container.get("args", [])
            ]
            mounts = [m for m in container.get("volumeMounts", []) if m["name"] not in volumes]
            container["volumeMounts"] = mounts
            if not mounts:
                del container["volumeMounts"]
    return job


def follow_pod_log(
    client: Any, pod: str, lines: list[str], stop: threading.Event, poll: float = 0.5
) -> None:
    """Collect a pod's log lines as they come, retrying every ``poll`` seconds until its
    container starts (``client``: the SDK's job client)."""
    while not stop.is_set():
        try:
            stream = client.stream_pod_log(pod, follow=True)
        except Exception:  # noqa: BLE001 - not started yet
            stop.wait(poll)
            continue
        try:
            for line in stream:
                lines.append(line)
        finally:
            stream.close()
        return
