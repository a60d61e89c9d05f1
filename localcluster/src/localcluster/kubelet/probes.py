"""Container probes, as the kubelet's prober runs them (process kubelet).

Each running container's ``startupProbe``, ``livenessProbe`` and ``readinessProbe`` run on the
kubelet's timer heap (first after ``initialDelaySeconds``, then every ``periodSeconds``); the
checks themselves run on a small thread pool so a slow endpoint never delays other timers.
``httpGet`` succeeds on a status from 200 to 399 (host: the pod IP unless given; the port may
be a container port's name; HTTPS is not verified, as upstream), ``tcpSocket`` when it
connects, ``exec`` when the command exits 0 (run by the runtime inside the container's mount
namespace). A result counts once it repeats ``successThreshold`` / ``failureThreshold`` times;
until the startup probe succeeds the others wait. The kubelet turns results into readiness, or
kills and restarts the container when liveness or startup fails.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from localcluster.kubelet.timers import TimerHandle, TimerQueue

logger = logging.getLogger(__name__)

KINDS = ("startupProbe", "livenessProbe", "readinessProbe")
WORKERS = 4

# (pod key, container, argv, timeout) -> (exit code, output)
Exec = Callable[[str, str, list[str], float], tuple[int, str]]
# (pod key, container, probe kind, verdict, message); verdict None: one attempt failed (the
# kubelet records an Unhealthy event), False/True: the threshold is reached (act on it)
Report = Callable[[str, str, str, bool | None, str], None]


@dataclass
class _Probe:
    kind: str
    spec: dict[str, Any]
    pod_key: str
    container: str
    pod_ip: str
    ports: dict[str, int]
    successes: int = 0
    failures: int = 0
    result: bool | None = None
    handle: TimerHandle | None = None
    stopped: bool = False
    waiting_for: list[_Probe] = field(default_factory=list)

    def setting(self, name: str, default: int) -> int:
        return int(self.spec.get(name) or default)


class Prober:
    def __init__(self, timers: TimerQueue, report: Report, execute: Exec | None = None) -> None:
        self._timers = timers
        self._report = report
        self._execute = execute
        self._lock = threading.Lock()
        self._probes: dict[tuple[str, str], list[_Probe]] = {}
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="prober")

    @staticmethod
    def has(spec: dict[str, Any], kind: str) -> bool:
        return bool(spec.get(kind))

    def start(self, pod_key: str, pod_ip: str, spec: dict[str, Any]) -> None:
        """Start the probes of a container that just started (replacing older ones)."""
        self.stop(pod_key, spec["name"])
        ports = {p["name"]: p["containerPort"] for p in spec.get("ports") or [] if p.get("name")}
        probes = [
            _Probe(k, spec[k], pod_key, spec["name"], pod_ip, ports) for k in KINDS if spec.get(k)
        ]
        startup = next((p for p in probes if p.kind == "startupProbe"), None)
        for probe in probes:
            if startup is not None and probe is not startup:
                probe.waiting_for.append(startup)
        with self._lock:
            self._probes[(pod_key, spec["name"])] = probes
        for probe in probes:
            self._schedule(probe, probe.setting("initialDelaySeconds", 0))

    def stop(self, pod_key: str, container: str) -> None:
        with self._lock:
            probes = self._probes.pop((pod_key, container), [])
        for probe in probes:
            probe.stopped = True
            if probe.handle is not None:
                probe.handle.cancel()

    def close(self) -> None:
        with self._lock:
            keys = list(self._probes)
        for key in keys:
            self.stop(*key)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _schedule(self, probe: _Probe, delay: float) -> None:
        if not probe.stopped:
            probe.handle = self._timers.call_later(delay, lambda: self._submit(probe))

    def _submit(self, probe: _Probe) -> None:
        if probe.stopped:
            return
        if any(p.result is not True for p in probe.waiting_for):
            self._schedule(probe, probe.setting("periodSeconds", 10))
            return
        try:
            self._pool.submit(self._run, probe)
        except RuntimeError:  # pool shut down
            return

    def _run(self, probe: _Probe) -> None:
        try:
            ok, message = self._check(probe)
        except Exception as err:  # noqa: BLE001 - a probe that cannot run fails
            ok, message = False, str(err)
        if probe.stopped:
            return
        if ok:
            probe.successes, probe.failures = probe.successes + 1, 0
        else:
            probe.failures, probe.successes = probe.failures + 1, 0
        success_threshold = (
            1 if probe.kind != "readinessProbe" else probe.setting("successThreshold", 1)
        )
        if not ok:
            self._report(probe.pod_key, probe.container, probe.kind, None, message)
        if ok and probe.successes >= success_threshold and probe.result is not True:
            probe.result = True
            self._report(probe.pod_key, probe.container, probe.kind, True, "")
        elif not ok and probe.failures >= probe.setting("failureThreshold", 3):
            changed = probe.result is not False
            probe.result = False
            if changed or probe.kind != "readinessProbe":
                self._report(probe.pod_key, probe.container, probe.kind, False, message)
            if probe.kind != "readinessProbe":
                return  # the container is being killed; a restart brings new probes
        if probe.kind == "startupProbe" and probe.result:
            return  # done: the other probes take over
        self._schedule(probe, probe.setting("periodSeconds", 10))

    def _check(self, probe: _Probe) -> tuple[bool, str]:
        spec = probe.spec
        timeout = float(spec.get("timeoutSeconds") or 1)
        if "httpGet" in spec:
            return self._http(probe, spec["httpGet"] or {}, timeout)
        if "tcpSocket" in spec:
            target = spec["tcpSocket"] or {}
            port = self._port(probe, target.get("port"))
            try:
                socket.create_connection(
                    (target.get("host") or probe.pod_ip, port), timeout
                ).close()
            except OSError as err:
                return False, f"dial tcp {probe.pod_ip}:{port}: {err}"
            return True, ""
        if "exec" in spec and self._execute is not None:
            argv = list((spec["exec"] or {}).get("command") or [])
            code, output = self._execute(probe.pod_key, probe.container, argv, timeout)
            return code == 0, output.strip() or f"command exited with {code}"
        return False, "probe has no supported handler"

    def _port(self, probe: _Probe, port: Any) -> int:
        if isinstance(port, str) and not port.isdigit():
            if port not in probe.ports:
                raise ValueError(f"port {port!r} is not a named container port")
            return probe.ports[port]
        return int(port)

    def _http(self, probe: _Probe, get: dict[str, Any], timeout: float) -> tuple[bool, str]:
        host = get.get("host") or probe.pod_ip
        port = self._port(probe, get.get("port"))
        if (get.get("scheme") or "HTTP").upper() == "HTTPS":
            context = ssl._create_unverified_context()  # noqa: S323 - kubelet skips verification
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=timeout, context=context
            )
        else:
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        headers = {h["name"]: h["value"] for h in get.get("httpHeaders") or []}
        headers.setdefault("User-Agent", "kube-probe/1.32")
        try:
            conn.request("GET", get.get("path") or "/", headers=headers)
            status = conn.getresponse().status
        except OSError as err:
            return False, f'Get "http://{host}:{port}{get.get("path") or "/"}": {err}'
        finally:
            conn.close()
        if 200 <= status < 400:
            return True, ""
        return False, f"HTTP probe failed with statuscode: {status}"
