"""Process container runtime: each container's command runs as a local process.

An image runs only if the image table maps it to a local command (``images``);
otherwise ``command`` + ``args`` run as given. Either way the process gets the
container's env (plus ``KUBERNETES_SERVICE_*``, ``serviceenv``) and ``workingDir``
(default: a per-pod sandbox directory), in a new session so the whole process
tree can be signalled as one group. Volumes (``volumes``: the service-account
token, ConfigMaps, Secrets...) are files under the pod directory, bind-mounted at
their ``mountPath`` in the pod's private mount namespace when one is available;
a volume that cannot be set up yet (a missing ConfigMap) is retried, the pod
staying in ContainerCreating. stdout and stderr go to one
log file per attempt (``<state>/pods/<ns>_<pod>_<uid>/<container>/<attempt>.log``)
served by ``logs`` (tail, limit, previous attempt, and follow until the attempt
ends). One reaper thread polls all children; an exit by signal N reports 128+N.
``stop_pod`` sends SIGTERM to every group and SIGKILL after the grace period.
Cluster DNS comes from ``dns.ClusterHosts`` through a mount namespace or the
Python resolver hook, depending on the mode.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.kubelet.dns import (
    HOSTS_ENV,
    ClusterHosts,
    hosts_bind,
    probe_mount_namespace,
)
from localcluster.kubelet.env import ContainerConfigError, container_argv, container_env
from localcluster.kubelet.images import ImageTable, LocalImage, container_command
from localcluster.kubelet.logfile import LogPump, TimedLogReader, append_line
from localcluster.kubelet.mounts import Bind, namespace_prefix, probe_overlay
from localcluster.kubelet.podstatus import PodRecord
from localcluster.kubelet.pyhook import POD_IP_ENV, write_hook
from localcluster.kubelet.runtime import ContainerRuntime, LogRequest, LogUnavailable, render_lines
from localcluster.kubelet.serviceenv import InClusterAPI, kubernetes_service_env
from localcluster.kubelet.timers import TimerQueue
from localcluster.kubelet.volumes import PodVolumes, VolumeError

logger = logging.getLogger(__name__)

REAP_INTERVAL = 0.05
PR_SET_PDEATHSIG = 1
FOLLOW_INTERVAL = 0.1
# How long an exit waits for the container's last output to reach its log file (the process
# group is killed first, so only a process that left it can hold the pipe open).
PUMP_DRAIN_SECONDS = 2.0
VOLUME_RETRY_SECONDS = 0.5
_INHERITED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "SHELL")


@dataclass
class _Proc:
    pod_key: str
    container: str
    container_id: str
    attempt: int
    log_path: str
    popen: subprocess.Popen[bytes] | None = None
    pump: LogPump | None = None  # copies the output into the log file, stamping each line
    exit_code: int | None = None
    env: dict[str, str] | None = None
    namespaced: bool = False


def _death_signal_setter() -> Callable[[], None] | None:
    """A preexec function asking Linux to SIGKILL the child if its parent dies.

    This only protects against the local cluster being killed outright; a
    normal stop kills every process group itself. The libc function is looked
    up here, in the parent, so the child only makes one system call.
    """
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def set_death_signal() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return set_death_signal


class ProcessRuntime(ContainerRuntime):
    """Runs containers as process groups on this machine."""

    name = "process"
    supports_probes = True

    def __init__(
        self,
        client: ClusterClient,
        state_dir: str,
        timers: TimerQueue,
        hosts: ClusterHosts | None = None,
        dns_mode: str = "none",
        cluster_domain: str = "cluster.local",
        images: ImageTable | None = None,
        api: InClusterAPI | None = None,
    ) -> None:
        self._client = client
        self._images = images or ImageTable()
        self._service_env = kubernetes_service_env(api)
        self._volumes = PodVolumes(client, timers)
        self._mount_namespaces: bool | None = None
        self._state_dir = state_dir
        self._timers = timers
        self._hosts = hosts
        self._dns_mode = dns_mode if hosts is not None else "none"
        self._domain = cluster_domain
        self._lock = threading.Condition()
        self._procs: dict[tuple[str, str], _Proc] = {}  # latest attempt per container
        self._hosts_files: dict[str, str] = {}
        self._closed = False
        self._hook_dir = write_hook(os.path.join(state_dir, "python-hook"))
        self._preexec = _death_signal_setter()
        self._reaper = threading.Thread(target=self._reap_loop, name="process-reaper", daemon=True)
        self._reaper.start()

    # -- starting ------------------------------------------------------------

    def _pod_dir(self, record: PodRecord) -> str:
        return os.path.join(
            self._state_dir, "pods", f"{record.namespace}_{record.name}_{record.uid}"
        )

    def _hostname(self, record: PodRecord) -> tuple[str, str]:
        """(hostname, names for the pod's own hosts line)."""
        spec = record.pod.get("spec") or {}
        hostname = spec.get("hostname") or record.name
        names = [hostname]
        if spec.get("subdomain"):
            fqdn = f"{hostname}.{spec['subdomain']}.{record.namespace}.svc.{self._domain}"
            names.insert(0, fqdn)
        return hostname, " ".join(dict.fromkeys(names))

    def _base_env(self, record: PodRecord, image: LocalImage | None) -> dict[str, str]:
        env = {k: os.environ[k] for k in _INHERITED_ENV if k in os.environ}
        if image is not None and image.path:
            env["PATH"] = os.pathsep.join([*image.path, env.get("PATH", os.defpath)])
        env["HOSTNAME"] = self._hostname(record)[0]
        env.update(self._service_env)
        env[POD_IP_ENV] = record.pod_ip
        return env

    def start_container(self, record: PodRecord, spec: dict[str, Any], attempt: int) -> None:
        name = spec["name"]
        container_id = f"process://{record.uid[:8]}-{name}-{attempt}"
        log_dir = os.path.join(self._pod_dir(record), name)
        os.makedirs(log_dir, exist_ok=True)
        proc = _Proc(
            record.key, name, container_id, attempt, os.path.join(log_dir, f"{attempt}.log")
        )
        with open(proc.log_path, "ab"):
            pass  # readers find the file from the start
        with self._lock:
            self._procs[(record.key, name)] = proc
        try:
            argv, env, cwd = self._prepare(record, spec)
            proc.env, proc.namespaced = env, argv[0] == "unshare"
            popen = self._spawn(argv, env, cwd)
        except VolumeError as err:
            logger.info("pod %s: %s; retrying", record.key, err)
            self._timers.call_later(
                VOLUME_RETRY_SECONDS, lambda: self._retry_start(record, spec, attempt, proc)
            )
            return
        except ContainerConfigError as err:
            self._fail(proc, 1, "CreateContainerConfigError", str(err))
            return
        except _CannotRun as err:
            self._fail(proc, 127, "ContainerCannotRun", str(err))
            return
        assert popen.stdout is not None
        pump = LogPump(popen.stdout, proc.log_path)
        with self._lock:
            proc.popen, proc.pump = popen, pump
            self._lock.notify_all()
        logger.debug("started %s/%s pid %d: %s", record.key, name, popen.pid, argv)
        self.callbacks.container_started(record.key, name, container_id)

    def _retry_start(
        self, record: PodRecord, spec: dict[str, Any], attempt: int, proc: _Proc
    ) -> None:
        with self._lock:
            current = self._procs.get((record.key, spec["name"])) is proc and not self._closed
        if current and not record.terminating:
            self.start_container(record, spec, attempt)

    def _fail(self, proc: _Proc, code: int, reason: str, message: str) -> None:
        append_line(proc.log_path, f"localcluster: {reason}: {message}\n".encode())
        proc.exit_code = code
        self.callbacks.container_exited(
            proc.pod_key, proc.container, proc.container_id, code, reason, message
        )

    def _prepare(
        self, record: PodRecord, spec: dict[str, Any]
    ) -> tuple[list[str], dict[str, str], str]:
        image = self._images.lookup(spec.get("image") or "")
        env = container_env(self._client, record, spec, self._base_env(record, image))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (self._hook_dir, env.get("PYTHONPATH")) if p)
        command, args = container_command(spec, image)
        argv = container_argv({"command": command, "args": args}, env)
        if not argv:
            raise _CannotRun(
                "the process kubelet runs only containers with a command or a known image; "
                f"container {spec['name']!r} has no command and image "
                f"{spec.get('image')!r} is not in its image table"
            )
        cwd = spec.get("workingDir") or os.path.join(self._pod_dir(record), "sandbox")
        if not spec.get("workingDir"):
            os.makedirs(cwd, exist_ok=True)
        if not os.path.isdir(cwd):
            raise _CannotRun(f"workingDir {cwd} does not exist")
        executable = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
        if not executable or not os.access(os.path.join(cwd, executable), os.X_OK):
            raise _CannotRun(f'exec: "{argv[0]}": executable file not found in $PATH')
        binds: list[Bind] = []
        if self._hosts is not None and self._dns_mode != "none":
            hosts_file = self._hosts_file(record)
            if self._dns_mode == "mount":
                binds.append(hosts_bind(hosts_file))
            else:
                env[HOSTS_ENV] = hosts_file
        volume_dirs = self._volumes.setup(record, self._pod_dir(record))
        if self._can_mount():
            binds += self._volumes.binds(record, spec, volume_dirs)
        if binds:
            binds, scratch = self._missing_targets(record, spec, binds)
            argv = [*namespace_prefix(binds, self._hostname(record)[0], scratch), *argv]
        return argv, env, cwd

    def _missing_targets(
        self, record: PodRecord, spec: dict[str, Any], binds: list[Bind]
    ) -> tuple[list[Bind], str]:
        """The binds to make, and the scratch directory where the pod's namespace makes the
        targets missing on the host (``mounts``); without overlays those are skipped."""
        missing = [b for b in binds if not os.path.lexists(b.target)]
        if not missing:
            return binds, ""
        if probe_overlay():
            scratch = os.path.join(self._pod_dir(record), "mounts", str(spec.get("name", "")))
            os.makedirs(scratch, exist_ok=True)
            return binds, scratch
        for bind in missing:
            logger.warning(
                "pod %s: mount path %s does not exist on this host; not mounted",
                record.key,
                bind.target,
            )
        return [b for b in binds if b not in missing], ""

    def _can_mount(self) -> bool:
        if self._mount_namespaces is None:
            self._mount_namespaces = self._dns_mode == "mount" or probe_mount_namespace()
        return self._mount_namespaces

    def _hosts_file(self, record: PodRecord) -> str:
        assert self._hosts is not None  # called only with cluster DNS on
        with self._lock:
            path = self._hosts_files.get(record.key)
        if path is None:
            path = self._hosts.add_pod(
                record.key,
                record.namespace,
                record.pod_ip,
                self._hostname(record)[1],
                (record.pod.get("metadata") or {}).get("labels") or {},
            )
            with self._lock:
                self._hosts_files[record.key] = path
        return path

    def _spawn(self, argv: list[str], env: dict[str, str], cwd: str) -> subprocess.Popen[bytes]:
        """Start the process, its stdout and stderr on one pipe (for a ``LogPump``)."""
        try:
            return subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                preexec_fn=self._preexec,
            )
        except OSError as err:
            raise _CannotRun(str(err)) from err

    # -- reaping and stopping ------------------------------------------------

    def _reap_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                live = [
                    (p, p.popen)
                    for p in self._procs.values()
                    if p.popen is not None and p.exit_code is None
                ]
                if not live:
                    self._lock.wait(0.5)
                    continue
            for proc, popen in live:
                code = popen.poll()
                if code is None:
                    continue
                code = 128 - code if code < 0 else code
                # like a runtime tearing down the container's cgroup: leftovers die too
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(popen.pid, signal.SIGKILL)
                if proc.pump is not None and not proc.pump.done.wait(PUMP_DRAIN_SECONDS):
                    logger.info("%s/%s: output still open after exit", proc.pod_key, proc.container)
                with self._lock:
                    proc.exit_code = code
                    self._lock.notify_all()
                self.callbacks.container_exited(
                    proc.pod_key, proc.container, proc.container_id, code
                )
            time.sleep(REAP_INTERVAL)

    def _signal(self, proc: _Proc, sig: int) -> None:
        if proc.popen is None or proc.exit_code is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.popen.pid, sig)

    def stop_pod(self, record: PodRecord, grace_seconds: float) -> None:
        with self._lock:
            procs = [p for (key, _), p in self._procs.items() if key == record.key]
        for proc in procs:
            self._signal(proc, signal.SIGTERM if grace_seconds > 0 else signal.SIGKILL)
        if grace_seconds > 0:

            def kill_the_rest() -> None:
                for proc in procs:
                    self._signal(proc, signal.SIGKILL)

            self._timers.call_later(grace_seconds, kill_the_rest)

    def stop_container(self, record: PodRecord, container: str, grace_seconds: float) -> None:
        with self._lock:
            proc = self._procs.get((record.key, container))
        if proc is None:
            return
        self._signal(proc, signal.SIGTERM if grace_seconds > 0 else signal.SIGKILL)
        if grace_seconds > 0:
            self._timers.call_later(grace_seconds, lambda: self._signal(proc, signal.SIGKILL))

    def exec_in_container(
        self, pod_key: str, container: str, argv: list[str], timeout: float
    ) -> tuple[int, str]:
        """Run ``argv`` like ``kubectl exec`` would: the container's env, mounts and hostname."""
        with self._lock:
            proc = self._procs.get((pod_key, container))
        if proc is None or proc.popen is None or proc.exit_code is not None:
            return 1, "container is not running"
        if proc.namespaced:
            argv = ["nsenter", "-t", str(proc.popen.pid), "-m", "-u", "--", *argv]
        try:
            done = subprocess.run(
                argv, env=proc.env, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return 1, f"command timed out after {timeout:g}s"
        except OSError as err:
            return 126, str(err)
        return done.returncode, (done.stdout + done.stderr).decode(errors="replace")

    def remove_pod(self, record: PodRecord) -> None:
        self.stop_pod(record, 0)
        self._volumes.teardown(record)
        with self._lock:
            for key in [k for k in self._procs if k[0] == record.key]:
                del self._procs[key]
            path = self._hosts_files.pop(record.key, None)
        if path and self._hosts is not None:
            self._hosts.remove_pod(record.key)
        shutil.rmtree(self._pod_dir(record), ignore_errors=True)

    def close(self) -> None:
        """SIGKILL every process group and wait for the leaders."""
        with self._lock:
            procs = list(self._procs.values())
            self._closed = True
            self._lock.notify_all()
        for proc in procs:
            self._signal(proc, signal.SIGKILL)
        for proc in procs:
            if proc.popen is not None:
                try:
                    proc.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    logger.warning("process %d did not die", proc.popen.pid)

    def running_pids(self) -> list[int]:
        with self._lock:
            return [
                p.popen.pid
                for p in self._procs.values()
                if p.popen is not None and p.exit_code is None
            ]

    # -- logs ------------------------------------------------------------------

    def logs(self, record: PodRecord, container: str, request: LogRequest) -> Iterator[bytes]:
        with self._lock:
            proc = self._procs.get((record.key, container))
        pod = record.key.split("/", 1)[-1]
        if proc is None or (proc.popen is None and proc.exit_code is None):
            # as the kubelet says of a container it has not started yet (its volumes wait)
            raise LogUnavailable(
                f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating'
            )
        attempt = proc.attempt - 1 if request.previous else proc.attempt
        if attempt < 0:
            raise LogUnavailable(
                f'previous terminated container "{container}" in pod "{pod}" not found'
            )
        path = os.path.join(self._pod_dir(record), container, f"{attempt}.log")
        follow = request.follow and not request.previous
        return self._read_log(path, proc if follow else None, request)

    def _read_log(self, path: str, follow: _Proc | None, request: LogRequest) -> Iterator[bytes]:
        """The log as ``request`` asks: the file as it is, then (following) what the container
        adds until it exits; with ``timestamps`` or a ``since_time``, line by line with the
        times the pump recorded (``logfile``)."""
        timed = request.timestamps or request.since_time is not None
        try:
            source = _TimedChunks(path, request) if timed else _RawChunks(path, request)
        except OSError:
            return
        budget = request.limit_bytes
        try:
            data = source.first(final=follow is None)
            while True:
                if data:
                    if budget is not None:
                        data = data[:budget]
                        budget -= len(data)
                    yield data
                    if budget is not None and budget <= 0:
                        return
                if follow is None or request.stop_event.is_set():
                    return
                ended = self._closed or (
                    follow.exit_code is not None
                    and (follow.pump is None or follow.pump.done.is_set())
                )
                data = source.more(final=ended)
                if not data:
                    if ended:
                        return
                    request.stop_event.wait(FOLLOW_INTERVAL)
        finally:
            source.close()


class _RawChunks:
    """The log file's bytes: the last ``tail_lines`` first, then whatever is appended."""

    def __init__(self, path: str, request: LogRequest) -> None:
        self._handle = open(path, "rb")  # noqa: SIM115 - closed by ``close``
        self._tail = request.tail_lines

    def first(self, final: bool) -> bytes:
        data = self._handle.read()
        if self._tail is not None:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-self._tail :]) if self._tail > 0 else b""
        return data

    def more(self, final: bool) -> bytes:
        return self._handle.read()

    def close(self) -> None:
        self._handle.close()


class _TimedChunks:
    """The log's lines since ``since_time``, stamped when ``timestamps`` (whole lines only
    until the container ends)."""

    def __init__(self, path: str, request: LogRequest) -> None:
        self._reader = TimedLogReader(path)
        self._request = request

    def first(self, final: bool) -> bytes:
        request = self._request
        return render_lines(
            self._reader.lines(final), request.since_time, request.tail_lines, request.timestamps
        )

    def more(self, final: bool) -> bytes:
        request = self._request
        return render_lines(self._reader.lines(final), request.since_time, None, request.timestamps)

    def close(self) -> None:
        self._reader.close()


class _CannotRun(Exception):
    """The container's process cannot be started."""
