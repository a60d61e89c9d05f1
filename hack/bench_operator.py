"""Operator throughput and latency (issue 5): the real ``tf-operator`` against a local cluster.

For each requested job count N, in a fresh cluster and operator:

1. Start a ``LocalCluster`` in this process with the simulated kubelet (two nodes with room for
   every pod, short start delay) and install the TFJob CRD from ``manifests/base/crd.yaml``.
2. Start the real ``tf-operator`` as a subprocess (``--threadiness`` 4 by default, leader
   election off unless ``--leader-elect``, JSON logs to a file).
3. Create N TFJobs of 1 PS + 4 workers in one burst (through the in-process registry, so the
   benchmark's own traffic never touches the HTTP server). Workers exit 0 after
   ``--run-seconds``; the PS runs until the operator deletes it (CleanPodPolicy Running). With
   no chief, a job Succeeds once worker 0 has completed (v0.5.3 rule).
4. Watch pods, services and TFJobs through in-process registry watches, stamping the moment
   each pod/service is seen ADDED (creationTimestamps are second-granular). Sample the
   operator's RSS and CPU with psutil.

API requests made by the operator are counted from the API server's
``apiserver_request_total{client="tf-operator",...}`` metric. ``--count`` can pick instead the
server's per-request debug log line (read in-process), or a small counting reverse proxy in this
process between the operator and the server (watch streams pass through unchanged; it shares
this process's GIL with the API server, so it slows the run down noticeably).

The local cluster's endpoints controller is off unless ``--endpoints``: the operator never
reads endpoints, and that controller's per-pod work would dominate the cluster's CPU.
``--profile-operator`` and ``--experiment-no-info-logs`` run the operator through a small
in-process wrapper for diagnosis; the default runs the installed ``tf-operator`` unchanged.

Human-readable figures go to stdout; the last line is ``BENCH_RESULT {json}``. Every process
and server started here is stopped on exit, including on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import http.server
import json
import logging
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
CRD_FILE = ROOT / "manifests/base/crd.yaml"
OPERATOR_BIN = Path(sys.executable).parent / "tf-operator"
NAMESPACE = "default"
OPERATOR_CLIENT = "tf-operator"
MARKER = "BENCH_RESULT "

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
EVENTS = ("", "v1", "events")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
RUN_SECONDS_ANNOTATION = "localcluster.tf-operator.io/run-seconds"

log = logging.getLogger("bench_operator")


# ------------------------------------------------------------------ pure helpers


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def tfjob_manifest(name: str, ps: int, workers: int, run_seconds: float) -> dict:
    """A TFJob whose workers exit 0 after ``run_seconds`` and whose PS runs until deleted."""

    def replica(replicas: int, annotations: dict[str, str]) -> dict:
        return {
            "replicas": replicas,
            "restartPolicy": "Never",
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "tensorflow", "image": "bench/tensorflow:none"}]},
            },
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "tfReplicaSpecs": {
                "PS": replica(ps, {}),
                "Worker": replica(workers, {RUN_SECONDS_ANNOTATION: f"{run_seconds:g}"}),
            }
        },
    }


def classify_request(method: str, target: str) -> tuple[str, str]:
    """``(verb, resource)`` of a Kubernetes API request, verbs as in RBAC (``watch`` for
    ``?watch=true``), resource with its subresource (``tfjobs/status``); ``("", "")`` for
    non-resource paths such as discovery."""
    parts = urlsplit(target)
    segments = [s for s in parts.path.split("/") if s]
    if segments[:1] == ["api"] and len(segments) >= 3:
        rest = segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 4:
        rest = segments[3:]
    else:
        return "", ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else "", rest[2:]
    query = parse_qs(parts.query)
    method = method.upper()
    if method == "GET":
        if query.get("watch", [""])[0].lower() in ("true", "1"):
            verb = "watch"
        else:
            verb = "get" if name else "list"
    else:
        verb = {
            "POST": "create",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection",
        }.get(method, method.lower())
    if sub:
        resource = f"{resource}/{sub[0]}"
    return verb, resource


_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_request_metric(text: str, client: str = OPERATOR_CLIENT) -> Counter | None:
    """``Counter[(verb, resource)]`` from ``apiserver_request_total`` samples of ``client``
    in a Prometheus text exposition; None when the metric is absent."""
    counts: Counter = Counter()
    found = "# TYPE apiserver_request_total " in text
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or match["name"] != "apiserver_request_total":
            continue
        found = True
        labels = dict(_LABEL.findall(match["labels"] or ""))
        if labels.get("client") != client:
            continue
        verb = labels.get("verb", "").lower()
        verb = {"post": "create", "put": "update"}.get(verb, verb)
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource = f"{resource}/{labels['subresource']}"
        counts[(verb, resource)] += float(match["value"])
    return counts if found else None


def minimum_requests_per_job(ps: int, workers: int) -> dict[str, int]:
    """The fewest API requests a v0.5.3-faithful operator can make for one job of this shape.

    One create per pod and per service. Three status writes: startTime + Created with the
    first pods; Succeeded once worker 0 has exited 0 (the Running condition is skipped when
    the operator first looks after worker 0 finished); the terminal branch's unconditional
    write. After success the still running PS pods are deleted with their services
    (CleanPodPolicy Running, the default), each delete preceded by v0.5.3's live GET. Events:
    one per create and delete, ExitedWithCode for worker 0 and TFJobSucceeded. All other reads
    come from informer caches. Workers still running at success add a GET + DELETE each for
    pod and service, plus two events; those are not counted here.
    """
    replicas = ps + workers
    return {
        "pods create": replicas,
        "services create": replicas,
        "tfjobs/status update": 3,
        "pods get": ps,
        "pods delete": ps,
        "services get": ps,
        "services delete": ps,
        "events create": 2 * replicas + 2 * ps + 2,
    }


def diff_counts(after: Counter, before: Counter) -> Counter:
    out = Counter(after)
    out.subtract(before)
    return Counter({k: v for k, v in out.items() if v})


def by_group(counts: Counter) -> dict[str, int]:
    """``{"<resource> <verb>": n}`` sorted by count, descending."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {f"{res or '(non-resource)'} {verb or '-'}".strip(): int(n) for (verb, res), n in items}


# ------------------------------------------------------------------ counting proxy


_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
}


class CountingProxy:
    """HTTP reverse proxy counting requests by ``(verb, resource)``; streams replies through.

    One upstream connection per client connection (keep-alive on both sides). Replies with a
    Content-Length are relayed whole; chunked ones (watches) are relayed chunk by chunk as they
    arrive, so watch latency is unchanged apart from one extra hop.
    """

    def __init__(self, upstream: str) -> None:
        parsed = urlsplit(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.counts: Counter = Counter()
        self.codes: Counter = Counter()
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="counting-proxy", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> CountingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def snapshot(self) -> Counter:
        with self._lock:
            return Counter(self.counts)

    def _count(self, method: str, target: str) -> None:
        key = classify_request(method, target)
        with self._lock:
            self.counts[key] += 1

    def _handler_class(self) -> type:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            upstream: http.client.HTTPConnection | None = None

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _forward(self) -> None:
                proxy._count(self.command, self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if self.upstream is None:
                    self.upstream = http.client.HTTPConnection(*proxy._upstream, timeout=3600)
                try:
                    self.upstream.request(self.command, self.path, body=body, headers=headers)
                    reply = self.upstream.getresponse()
                except (OSError, http.client.HTTPException):
                    self.upstream.close()
                    self.upstream = None
                    self.send_error(502)
                    return
                with proxy._lock:
                    proxy.codes[reply.status] += 1
                self.send_response_only(reply.status, reply.reason)
                for key, value in reply.getheaders():
                    if key.lower() not in _HOP_BY_HOP:
                        self.send_header(key, value)
                if reply.chunked or reply.getheader("Content-Length") is None:
                    self._stream(reply)
                else:
                    data = reply.read()
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()

            def _stream(self, reply: http.client.HTTPResponse) -> None:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                try:
                    while True:
                        data = reply.read1(65536)
                        if not data:
                            break
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    self.close_connection = True
                finally:
                    if self.upstream is not None and (reply.will_close or self.close_connection):
                        self.upstream.close()
                        self.upstream = None

            def finish(self) -> None:
                if self.upstream is not None:
                    self.upstream.close()
                super().finish()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _forward

        return Handler


# ------------------------------------------------------------------ observation


@dataclass
class JobTimes:
    created: float = 0.0
    pods: dict[str, float] = field(default_factory=dict)
    services: dict[str, float] = field(default_factory=dict)
    succeeded: float | None = None
    failed: bool = False


class Observer:
    """Registry watches on pods, services and TFJobs, stamping when each thing is first seen."""

    def __init__(self, registry: Any, replicas: int) -> None:
        self._registry = registry
        self._replicas = replicas
        self.jobs: dict[str, JobTimes] = {}
        self.pods_seen = 0
        self.services_seen = 0
        self.succeeded = 0
        self.failed = 0
        self.last_pod = 0.0
        self.last_service = 0.0
        self.last_success = 0.0
        self.changed = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for gvr, handler in (
            (PODS, self._on_pod),
            (SERVICES, self._on_service),
            (TFJOBS, self._on_job),
        ):
            watch = self._registry.watch(gvr, NAMESPACE)
            thread = threading.Thread(
                target=self._loop, args=(watch, handler), name=f"observe-{gvr[2]}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(3)

    def _loop(self, watch: Any, handler: Any) -> None:
        try:
            while not self._stop.is_set():
                item = watch.get(0.2)
                if item is None:
                    if watch.closed:
                        log.error("observer watch closed: %s", watch.close_reason)
                        return
                    continue
                handler(item[0], item[1], time.monotonic())
        finally:
            watch.stop()

    def _job_of(self, obj: dict) -> JobTimes | None:
        name = ((obj.get("metadata") or {}).get("labels") or {}).get("tf-job-name")
        return self.jobs.get(name) if name else None

    def _on_pod(self, etype: str, obj: dict, now: float) -> None:
        job = self._job_of(obj)
        name = obj["metadata"]["name"]
        if etype == "ADDED" and job is not None and name not in job.pods:
            with self.changed:
                job.pods[name] = now
                self.pods_seen += 1
                self.last_pod = now
                self.changed.notify_all()

    def _on_service(self, etype: str, obj: dict, now: float) -> None:
        job = self._job_of(obj)
        name = obj["metadata"]["name"]
        if etype == "ADDED" and job is not None and name not in job.services:
            with self.changed:
                job.services[name] = now
                self.services_seen += 1
                self.last_service = now
                self.changed.notify_all()

    def _on_job(self, etype: str, obj: dict, now: float) -> None:
        job = self.jobs.get(obj["metadata"]["name"])
        if job is None or job.succeeded is not None or job.failed:
            return
        conditions = (obj.get("status") or {}).get("conditions") or []
        true = {c.get("type") for c in conditions if c.get("status") == "True"}
        with self.changed:
            if "Succeeded" in true:
                job.succeeded = now
                self.succeeded += 1
                self.last_success = now
            elif "Failed" in true:
                job.failed = True
                self.failed += 1
            self.changed.notify_all()

    def wait(self, predicate: Any, deadline: float) -> bool:
        with self.changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.changed.wait(min(remaining, 1.0))
            return True


def thread_cpu_by_group() -> Counter:
    """CPU seconds of this process's live threads, grouped by name with digits removed
    (``httpcore-conn-12`` and ``httpcore-conn-3`` share a group)."""
    import psutil

    names = {t.native_id: re.sub(r"[-_]?\d+", "", t.name) for t in threading.enumerate()}
    groups: Counter = Counter()
    for thread in psutil.Process().threads():
        groups[names.get(thread.id, "(exited or native)")] += thread.user_time + thread.system_time
    return groups


# ------------------------------------------------------------------ operator process

WRAPPED_OPERATOR = "--as-wrapped-operator"
_BLOCKING_LEAVES = frozenset(
    {"wait", "select", "poll", "accept", "recv_into", "readinto", "readline", "sleep",
     "_wait_for_tstate_lock", "serve_forever", "_worker_wait"}
)  # fmt: skip


def wrapped_operator_main(out: str, no_info_logs: bool, operator_args: list[str]) -> int:
    """Run ``tf-operator`` in this process, for diagnosis: with a stack sampler when ``out`` is
    not ``-`` (``--profile-operator``), with INFO logging globally disabled when
    ``no_info_logs`` (``--experiment-no-info-logs``, to measure what logging costs).

    Every 10 ms each thread that is not parked in a wait is sampled: its innermost frame
    counts as "self", every distinct function on its stack as "inclusive". The top entries
    are written to ``out`` as JSON every two seconds (the process may be killed at the end).
    A thread blocked on a lock still counts (its leaf is the Python frame that called
    acquire), so read the figures as "where threads are", dominated by CPU when CPU-bound.
    """
    own: Counter = Counter()
    inclusive: Counter = Counter()
    total = [0]

    def label(frame: Any) -> str:
        return f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}"

    def sample() -> None:
        me = threading.get_ident()
        last_dump = time.monotonic()
        while True:
            time.sleep(0.01)
            for ident, frame in sys._current_frames().items():
                if ident == me or frame.f_code.co_name in _BLOCKING_LEAVES:
                    continue
                total[0] += 1
                own[label(frame)] += 1
                seen = set()
                while frame is not None:
                    seen.add(label(frame))
                    frame = frame.f_back
                inclusive.update(seen)
            if time.monotonic() - last_dump > 2:
                last_dump = time.monotonic()
                dump()

    def dump() -> None:
        n = max(1, total[0])
        doc = {
            "samples": total[0],
            "self_pct": [(k, round(100 * v / n, 1)) for k, v in own.most_common(25)],
            "inclusive_pct": [(k, round(100 * v / n, 1)) for k, v in inclusive.most_common(40)],
        }
        Path(out + ".tmp").write_text(json.dumps(doc, indent=1))
        os.replace(out + ".tmp", out)

    if no_info_logs:
        logging.disable(logging.INFO)
    if out != "-":
        threading.Thread(target=sample, name="bench-sampler", daemon=True).start()
    from tf_operator.app.main import main as operator_main

    operator_main(operator_args)
    return 0


class OperatorProcess:
    """The real ``tf-operator`` with its logs in a file; psutil samples RSS and CPU."""

    def __init__(
        self,
        kubeconfig: str,
        log_path: Path,
        threadiness: int,
        leader_elect: bool,
        profile_out: Path | None = None,
        no_info_logs: bool = False,
    ):
        import psutil

        wrapper = [
            sys.executable,
            __file__,
            WRAPPED_OPERATOR,
            str(profile_out or "-"),
            "1" if no_info_logs else "0",
        ]
        argv = [
            *(wrapper if profile_out or no_info_logs else [str(OPERATOR_BIN)]),
            f"--kubeconfig={kubeconfig}",
            f"--threadiness={threadiness}",
            "--monitoring-port=0",
            "--monitoring-address=127.0.0.1",
            "--json-log-format=true",
            f"--leader-elect={'true' if leader_elect else 'false'}",
        ]
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
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
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            with contextlib.suppress(Exception):
                self.peak_rss = max(self.peak_rss, self._ps.memory_info().rss)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def usage(self) -> dict[str, float]:
        """Current RSS (MiB), peak RSS seen so far (MiB) and CPU seconds (user + system)."""
        try:
            rss = self._ps.memory_info().rss
            cpu = self._ps.cpu_times()
        except Exception:  # noqa: BLE001 - process gone
            return {}
        self.peak_rss = max(self.peak_rss, rss)
        return {
            "rss_mib": round(rss / 2**20, 1),
            "peak_rss_mib": round(self.peak_rss / 2**20, 1),
            "cpu_seconds": round(cpu.user + cpu.system, 2),
        }

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float = 10.0) -> None:
        self._stop.set()
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._log.close()


# ------------------------------------------------------------------ one run


SERVER_LOGGER = "localcluster.apiserver.server"


class ServerLogCounter(logging.Handler):
    """Counts requests from the API server's per-request debug log line, in this process.

    The emulator logs ``method, target, status, ms, user-agent`` at debug level for every
    request; this handler classifies the ones whose User-Agent product is ``client``. It costs
    one LogRecord per request, far less than a proxy hop. Records at WARNING and above are
    passed on to the root logger's handlers as before.
    """

    def __init__(self, client: str = OPERATOR_CLIENT) -> None:
        super().__init__(logging.DEBUG)
        self.client = client
        self.counts: Counter = Counter()
        self.seen = 0
        self._logger = logging.getLogger(SERVER_LOGGER)
        self._saved = (self._logger.level, self._logger.propagate)

    def install(self) -> ServerLogCounter:
        self._logger.addHandler(self)
        self._logger.setLevel(logging.DEBUG)
        self._logger.propagate = False
        return self

    def uninstall(self) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._saved[0])
        self._logger.propagate = self._saved[1]

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            logging.getLogger().handle(record)
            return
        args = record.args
        if not isinstance(args, tuple) or len(args) != 5 or not isinstance(args[4], str):
            return
        self.seen += 1
        if args[4].split("/", 1)[0] == self.client:
            self.counts[classify_request(str(args[0]), str(args[1]))] += 1

    def snapshot(self) -> Counter:
        return Counter(self.counts)


class RequestCounter:
    """Operator request counts: the server's metric, its request log, or a counting proxy.

    ``auto`` prefers the ``apiserver_request_total`` metric, then the server's request log
    line (in-process, cheap), then the proxy (costly: it shares this process's GIL with the
    API server and roughly halves throughput).
    """

    def __init__(self, server_url: str, mode: str) -> None:
        self._url = server_url
        self.proxy: CountingProxy | None = None
        self.log_counter: ServerLogCounter | None = None
        if mode in ("auto", "metrics") and self._scrape() is not None:
            self.mode = "apiserver-metric"
        elif mode == "metrics":
            raise SystemExit("the API server exposes no apiserver_request_total metric")
        elif mode in ("auto", "log") and self._try_log_counter():
            self.mode = "apiserver-request-log"
        elif mode == "log":
            raise SystemExit("the API server does not log requests with their User-Agent")
        elif mode == "none":
            self.mode = "none"
        else:
            self.mode = "counting-proxy"
            self.proxy = CountingProxy(server_url).start()

    def _try_log_counter(self) -> bool:
        counter = ServerLogCounter(client="bench-probe").install()
        request = urllib.request.Request(
            self._url + "/api/v1/namespaces/default/pods?limit=1",
            headers={"User-Agent": "bench-probe/1"},
        )
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=10) as resp:
            resp.read()
        # the server logs the request after sending the reply: give it a moment
        deadline = time.monotonic() + 3
        while counter.snapshot()[("list", "pods")] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if counter.snapshot()[("list", "pods")] == 1:
            counter.client = OPERATOR_CLIENT
            counter.counts.clear()
            self.log_counter = counter
            return True
        counter.uninstall()
        return False

    @property
    def operator_url(self) -> str:
        return self.proxy.url if self.proxy else self._url

    def _scrape(self) -> Counter | None:
        try:
            with urllib.request.urlopen(self._url + "/metrics", timeout=10) as resp:
                return parse_request_metric(resp.read().decode(errors="replace"))
        except OSError:
            return None

    def snapshot(self) -> Counter:
        if self.proxy is not None:
            return self.proxy.snapshot()
        if self.log_counter is not None:
            return self.log_counter.snapshot()
        if self.mode == "none":
            return Counter()
        return self._scrape() or Counter()

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        if self.log_counter is not None:
            self.log_counter.uninstall()


# Resources a leader-election lock may live in: its renewals never stop, so they do not count
# against quiescence.
LOCK_RESOURCES = frozenset({"endpoints", "leases", "configmaps"})


def _total(counts: Counter, exclude: frozenset[str] = frozenset()) -> int:
    return int(sum(n for (_, res), n in counts.items() if res not in exclude))


def _wait_operator_ready(cluster: Any, operator: OperatorProcess, base: int, timeout: float):
    """Wait until the operator watches TFJobs, pods and services (three more registry watches)."""
    deadline = time.monotonic() + timeout
    while cluster.registry.watch_count() < base + 3:
        if not operator.alive():
            raise RuntimeError(f"tf-operator exited early:\n{operator.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"tf-operator did not start watching in {timeout:.0f}s")
        time.sleep(0.05)


def _start_cluster(args: argparse.Namespace, jobs: int, cleanup: contextlib.ExitStack) -> Any:
    """A simulated-kubelet LocalCluster with room for every pod and the TFJob CRD installed."""
    from localcluster import LocalCluster, NodeSpec, SimulatedTiming

    per_node = math.ceil(jobs * (args.ps + args.workers) / args.nodes) + 10
    cluster = LocalCluster(
        kubelet="simulated",
        nodes=args.nodes,
        node=NodeSpec(cpu="100000", memory="100000Gi", pods=per_node),
        simulated=SimulatedTiming(start_delay=args.start_delay),
        watch_history=max(10000, jobs * 60),
        endpoints=args.endpoints,
    )
    cluster.start()
    cleanup.callback(cluster.stop)
    cluster.registry.create(CRDS, None, yaml.safe_load(CRD_FILE.read_text()))
    _wait_for(lambda: cluster.registry.list(TFJOBS, NAMESPACE) is not None, 30)
    return cluster


def _start_operator(
    args: argparse.Namespace,
    cluster: Any,
    operator_url: str,
    name: str,
    workdir: Path,
    cleanup: contextlib.ExitStack,
) -> OperatorProcess:
    """The operator, started and watching TFJobs, pods and services."""
    from localcluster.cluster import write_kubeconfig

    kubeconfig = write_kubeconfig(str(workdir / f"{name}.kubeconfig"), operator_url, "bench")
    watches_before = cluster.registry.watch_count()
    operator = OperatorProcess(
        kubeconfig,
        workdir / f"{name}.log",
        args.threadiness,
        args.leader_elect,
        workdir / f"{name}.profile.json" if args.profile_operator else None,
        args.experiment_no_info_logs,
    )
    cleanup.callback(operator.stop)
    _wait_operator_ready(cluster, operator, watches_before, 60)
    time.sleep(0.5)  # let the informers finish their initial lists before the burst
    return operator


class ProcessUsage:
    """CPU of this process (API server, scheduler, kubelets, observers), total and by thread."""

    def __init__(self) -> None:
        import psutil

        self._me = psutil.Process()
        self._cpu = sum(self._me.cpu_times()[:2])
        self._threads = thread_cpu_by_group()

    def since_start(self) -> dict[str, Any]:
        by_thread = diff_counts(thread_cpu_by_group(), self._threads)
        return {
            "bench_process_cpu_s": round(sum(self._me.cpu_times()[:2]) - self._cpu, 2),
            "bench_process_cpu_by_thread": {
                name: round(cpu, 2) for name, cpu in by_thread.most_common(8) if cpu >= 0.05
            },
        }


def run_once(args: argparse.Namespace, jobs: int, budget: float, workdir: Path) -> dict:
    """One cluster + operator; ``jobs`` TFJobs; stops waiting after ``budget`` seconds."""
    replicas = args.ps + args.workers
    want = jobs * replicas
    result: dict[str, Any] = {
        "jobs": jobs,
        "pods_per_job": replicas,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    with contextlib.ExitStack() as cleanup:
        cluster = _start_cluster(args, jobs, cleanup)
        counter = RequestCounter(cluster.url, args.count)
        cleanup.callback(counter.stop)
        result["request_count_source"] = counter.mode
        observer = Observer(cluster.registry, replicas)
        observer.start()
        cleanup.callback(observer.stop)
        t_start = time.monotonic()
        operator = _start_operator(
            args, cluster, counter.operator_url, f"operator-{jobs}", workdir, cleanup
        )
        result["operator_startup_s"] = round(time.monotonic() - t_start, 2)
        result["operator_idle"] = operator.usage()
        before = counter.snapshot()
        result["startup_requests"] = _total(before)

        names = [f"bench-{i:05d}" for i in range(jobs)]
        observer.jobs.update({name: JobTimes() for name in names})
        usage = ProcessUsage()
        t0 = time.monotonic()
        for name in names:
            observer.jobs[name].created = time.monotonic()
            cluster.registry.create(
                TFJOBS, NAMESPACE, tfjob_manifest(name, args.ps, args.workers, args.run_seconds)
            )
        result["create_burst_s"] = round(time.monotonic() - t0, 2)
        deadline = t0 + budget

        all_objects = observer.wait(
            lambda: (
                (observer.pods_seen >= want and observer.services_seen >= want)
                or not operator.alive()
            ),
            deadline,
        )
        result["operator_at_all_created"] = operator.usage()
        all_done = observer.wait(
            lambda: observer.succeeded + observer.failed >= jobs or not operator.alive(), deadline
        )
        at_done = counter.snapshot()
        result["operator_at_all_succeeded"] = operator.usage()
        result.update(usage.since_start())
        settle_until = min(deadline + 20, time.monotonic() + args.settle)
        result["quiescent_after_s"] = _wait_quiescent(counter, settle_until)
        at_quiet = counter.snapshot()
        result["operator_at_quiescence"] = operator.usage()

        if not operator.alive():
            result["operator_exit"] = operator.proc.returncode
            result["operator_log_tail"] = operator.tail()
        complete = all_objects and all_done and operator.alive()
        result.update(_figures(observer, t0, want, jobs, complete))
        result.update(_request_figures(diff_counts(at_done, before), diff_counts(at_quiet, before)))
        minimum = minimum_requests_per_job(args.ps, args.workers)
        result["requests_per_job_min"] = sum(minimum.values())
        result["minimum_breakdown"] = minimum
        result["events_stored_by_reason"] = _events_by_reason(cluster.registry)
        result["operator_event_drops_logged"] = _logged_event_drops(operator.log_path)
        result["operator_syncs_logged"] = _count_in_file(operator.log_path, SYNC_LOG_LINE)
        result["operator_log"] = str(operator.log_path)
        profile = operator.log_path.with_suffix(".profile.json")
        if profile.exists():
            result["operator_profile"] = json.loads(profile.read_text())
    return result


def _events_by_reason(registry: Any) -> dict[str, int]:
    """Events in the namespace by reason, counting aggregated repeats (``count``)."""
    items, _ = registry.list(EVENTS, NAMESPACE)
    reasons: Counter = Counter()
    for event in items:
        reasons[event.get("reason", "")] += int(event.get("count") or 1)
    return dict(reasons.most_common())


_DROPS = re.compile(rb"event queue full.*?\((\d+) dropped so far\)")


SYNC_LOG_LINE = b"Finished syncing tfjob"


def _count_in_file(path: Path, needle: bytes) -> int:
    """How many times ``needle`` occurs in the file (0 when unreadable)."""
    try:
        return path.read_bytes().count(needle)
    except OSError:
        return 0


def _logged_event_drops(path: Path) -> int:
    """The highest "N dropped so far" the operator logged for its full event queue (the log
    line is thinned, so this is a lower bound on events dropped)."""
    try:
        return max((int(m) for m in _DROPS.findall(path.read_bytes())), default=0)
    except OSError:
        return 0


def _wait_for(fn: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            value = fn()
            if value:
                return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s")
        time.sleep(0.05)


def _wait_quiescent(counter: RequestCounter, deadline: float, quiet: float = 3.0) -> float | None:
    """Wait until the operator makes no request (leader-lock renewals aside) for ``quiet``
    seconds; returns the seconds until its last request, or None at the deadline."""
    began = last_change = time.monotonic()
    last = _total(counter.snapshot(), LOCK_RESOURCES)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now_total = _total(counter.snapshot(), LOCK_RESOURCES)
        if now_total != last:
            last, last_change = now_total, time.monotonic()
        elif time.monotonic() - last_change >= quiet:
            return round(last_change - began, 2)
    return None


def _figures(obs: Observer, t0: float, want: int, jobs: int, complete: bool) -> dict:
    latencies = [
        max(job.pods.values()) - job.created
        for job in obs.jobs.values()
        if len(job.pods) >= want // jobs
    ]
    to_success = [job.succeeded - job.created for job in obs.jobs.values() if job.succeeded]
    all_pods = obs.last_pod - t0 if obs.pods_seen >= want else None
    all_svcs = obs.last_service - t0 if obs.services_seen >= want else None
    everything = max(all_pods, all_svcs) if all_pods and all_svcs else None
    done = obs.last_success - t0 if obs.succeeded >= jobs else None
    return {
        "complete": complete,
        "pods_seen": obs.pods_seen,
        "services_seen": obs.services_seen,
        "jobs_succeeded": obs.succeeded,
        "jobs_failed": obs.failed,
        "all_pods_s": _r(all_pods),
        "all_services_s": _r(all_svcs),
        "all_pods_and_services_s": _r(everything),
        "pod_creation_rate_per_s": _r(want / all_pods if all_pods else None),
        "job_all_pods_p50_s": _r(percentile(latencies, 50)),
        "job_all_pods_p99_s": _r(percentile(latencies, 99)),
        "job_all_pods_max_s": _r(max(latencies) if latencies else None),
        "job_succeeded_p50_s": _r(percentile(to_success, 50)),
        "job_succeeded_p99_s": _r(percentile(to_success, 99)),
        "all_succeeded_s": _r(done),
        "job_throughput_per_s": _r(jobs / done if done else None),
    }


def _request_figures(at_done: Counter, at_quiet: Counter) -> dict:
    return {
        "requests_until_all_succeeded": _total(at_done),
        "requests_until_quiescent": _total(at_quiet),
        "requests_breakdown": by_group(at_quiet),
    }


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


# ------------------------------------------------------------------ reporting


def report(result: dict) -> None:
    n = result["jobs"]
    print(f"\n== {n} TFJobs x {result['pods_per_job']} pods ==")
    print(f"  load average at start (other work on the machine) {result['load_average_at_start']}")
    print(f"  operator started and watching in {result['operator_startup_s']} s")
    print(f"  create burst (in-process)        {result['create_burst_s']} s")
    if not result["complete"]:
        print(
            f"  INCOMPLETE: {result['pods_seen']} pods, {result['services_seen']} services, "
            f"{result['jobs_succeeded']} jobs Succeeded ({result['jobs_failed']} Failed)"
        )
    print(f"  all pods + services exist after  {result['all_pods_and_services_s']} s")
    print(f"  pod creation rate                {result['pod_creation_rate_per_s']} /s")
    print(
        f"  per job, create -> 5 pods seen   p50 {result['job_all_pods_p50_s']} s, "
        f"p99 {result['job_all_pods_p99_s']} s"
    )
    print(
        f"  per job, create -> Succeeded     p50 {result['job_succeeded_p50_s']} s, "
        f"p99 {result['job_succeeded_p99_s']} s"
    )
    print(f"  all jobs Succeeded after         {result['all_succeeded_s']} s")
    for label, key in (
        ("idle", "operator_idle"),
        ("all created", "operator_at_all_created"),
        ("all succeeded", "operator_at_all_succeeded"),
        ("quiescent", "operator_at_quiescence"),
    ):
        usage = result.get(key) or {}
        print(
            f"  operator {label:<14} RSS {usage.get('rss_mib')} MiB "
            f"(peak {usage.get('peak_rss_mib')}), CPU {usage.get('cpu_seconds')} s"
        )
    print(
        f"  this process (API server, scheduler, kubelets, observers) CPU until all Succeeded: "
        f"{result['bench_process_cpu_s']} s"
    )
    profile = result.get("operator_profile")
    if profile:
        print(f"  operator profile ({profile['samples']} busy-thread samples), self / inclusive:")
        for (name, pct), (iname, ipct) in zip(
            profile["self_pct"][:15], profile["inclusive_pct"][:15], strict=False
        ):
            print(f"      {pct:5.1f}% {name:<44} {ipct:5.1f}% {iname}")
    for name, cpu in result["bench_process_cpu_by_thread"].items():
        print(f"      {cpu:7.2f} s  {name}")
    syncs = result.get("operator_syncs_logged", 0)
    print(f"  TFJob syncs (from the operator log) {syncs} = {syncs / n:.1f}/job")
    stored = result["events_stored_by_reason"]
    print(
        f"  events stored: {sum(stored.values())} "
        f"(operator logged >= {result['operator_event_drops_logged']} dropped, queue full)"
    )
    if result["request_count_source"] == "none":
        return
    per_job = result["requests_until_quiescent"] / n
    print(
        f"  operator API requests ({result['request_count_source']}): "
        f"{result['requests_until_all_succeeded']} until all Succeeded, "
        f"{result['requests_until_quiescent']} until quiescent "
        f"= {per_job:.1f}/job (minimum {result['requests_per_job_min']}/job)"
    )
    for key, count in result["requests_breakdown"].items():
        print(f"      {key:<28} {count:>7}  ({count / n:.2f}/job)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[200, 1000],
        help="comma-separated job counts, each in a fresh cluster (default 200,1000)",
    )
    parser.add_argument("--threadiness", type=int, default=4)
    parser.add_argument("--leader-elect", action="store_true", help="run with leader election")
    parser.add_argument("--ps", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--run-seconds", type=float, default=1.0, help="worker run time")
    parser.add_argument("--start-delay", type=float, default=0.1, help="bind -> Running")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument(
        "--endpoints",
        action="store_true",
        help="run the local cluster's endpoints controller too (off: the operator never reads "
        "endpoints, and that controller's per-pod scan of all services would dominate)",
    )
    parser.add_argument(
        "--budget", type=float, default=310, help="seconds for all runs together (default 310)"
    )
    parser.add_argument("--settle", type=float, default=90, help="max wait for quiescence")
    parser.add_argument(
        "--count",
        choices=("auto", "metrics", "log", "proxy", "none"),
        default="auto",
        help="request counting: the server's apiserver_request_total metric, its request log "
        "line, a counting proxy, the first of metric/log/proxy that works (auto), or none",
    )
    parser.add_argument("--keep", action="store_true", help="keep the operator logs")
    parser.add_argument(
        "--profile-operator",
        action="store_true",
        help="run the operator under a stack sampler and print where its threads spend time",
    )
    parser.add_argument(
        "--experiment-no-info-logs",
        action="store_true",
        help="experiment, not the real configuration: run the operator with INFO logging "
        "disabled (logging.disable) to measure what its logging costs",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # Ctrl-C and SIGTERM both unwind through the cleanup stacks (SIGINT may arrive ignored
    # when started in the background by a shell)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    socket.setdefaulttimeout(None)
    workdir = Path(tempfile.mkdtemp(prefix="bench-operator-"))
    began = time.monotonic()
    results: list[dict] = []
    code = 0
    try:
        for index, jobs in enumerate(args.jobs):
            remaining = args.budget - (time.monotonic() - began)
            share = jobs / sum(args.jobs[index:])
            # teardown and startup take ~15 s per run; the rest goes to the jobs
            budget = max(30.0, remaining * share - 15)
            print(f"running {jobs} jobs (waiting at most {budget:.0f} s)...", flush=True)
            try:
                result = run_once(args, jobs, budget, workdir)
            except (RuntimeError, OSError) as err:
                print(f"run with {jobs} jobs failed: {err}", file=sys.stderr)
                results.append({"jobs": jobs, "error": str(err), "complete": False})
                code = 1
                continue
            report(result)
            results.append(result)
            code = code or (0 if result["complete"] else 1)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        code = 130
    finally:
        if not args.keep and code == 0:
            for path in workdir.iterdir():
                path.unlink()
            workdir.rmdir()
        else:
            print(f"operator logs kept in {workdir}", file=sys.stderr)
    summary = {
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "threadiness": args.threadiness,
        "endpoints_controller": args.endpoints,
        "experiment_no_info_logs": args.experiment_no_info_logs,
        "leader_election": args.leader_elect,
        "worker_run_seconds": args.run_seconds,
        "sim_start_delay_s": args.start_delay,
        "total_s": round(time.monotonic() - began, 1),
        "runs": results,
    }
    print(MARKER + json.dumps(summary, sort_keys=True))
    return code


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == WRAPPED_OPERATOR:
        sys.exit(wrapped_operator_main(sys.argv[2], sys.argv[3] == "1", sys.argv[4:]))
    sys.exit(main())
