"""The operator benchmark scenarios, each in a fresh local cluster.

- ``burst``: N TFJobs created at once; when every pod and service exists (overall and per
  job), the subject's CPU and requests, and for operators the whole lifecycle (Succeeded and
  the PS cleanup) with CPU per job up to the subject's last request.
- ``steady``: TFJobs created at a fixed rate; per-job latency to all pods, and the
  operator's workqueue depth scraped from its /metrics every second.
- ``memory``: start-up CPU and idle RSS on an empty cluster, then RSS with growing numbers
  of pods in the operator's cache (inert pods bound to a node that does not exist, owned by a
  ConfigMap: every informer caches them, nothing acts on them).

Bursts and the steady load first wait for the machine to settle (``settle``), so what one
scenario leaves behind does not count against the next. Each returns a plain dict of figures;
nothing here judges them (see ``goals``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit import cluster as lc
from benchkit import procs
from benchkit.observe import Observer
from benchkit.stats import percentile, rnd
from benchkit.workload import COMPONENT, NAMESPACE, floor_pod, job_names, tfjob_manifest


@dataclass
class Settings:
    workdir: Path
    ps: int = 1
    workers: int = 4
    run_seconds: float = 1.0
    start_delay: float = 0.1
    endpoints: bool = True

    @property
    def replicas(self) -> int:
        return self.ps + self.workers


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def settle(busy_at_most: float = 0.25, window: float = 1.0, timeout: float = 120.0) -> float:
    """Wait until the machine's cores are at most ``busy_at_most`` busy over two windows in a
    row (what the last scenario left behind, e.g. a 5,000-job cluster tearing down, must not
    count against the next); the busy fraction at the end. The load average cannot tell: it
    decays over minutes.

    The local cluster runs in this process, so the heap the earlier scenarios left is collected
    now and frozen: right after the 5,000-job run, this process (and with it the API server)
    once stalled for 11 s in the middle of the steady load, as a full collection of a heap that
    size would."""
    gc.collect()
    gc.freeze()
    deadline = time.monotonic() + timeout
    busy, total = _cpu_times()
    quiet_windows, fraction = 0, 1.0
    while time.monotonic() < deadline and quiet_windows < 2:
        time.sleep(window)
        now_busy, now_total = _cpu_times()
        fraction = (now_busy - busy) / max(1, now_total - total)
        busy, total = now_busy, now_total
        quiet_windows = quiet_windows + 1 if fraction <= busy_at_most else 0
    return round(fraction, 2)


def _setup(
    stack: contextlib.ExitStack, settings: Settings, subject: procs.Subject, jobs: int, name: str
) -> tuple[Any, Observer, procs.MeasuredProcess, float]:
    """A cluster with room for ``jobs`` jobs, an observer on it, and ``subject`` started and
    ready (with the seconds that took); all stopped when ``stack`` unwinds."""
    cluster = lc.start_cluster(
        stack,
        jobs * settings.replicas,
        endpoints=settings.endpoints,
        start_delay=settings.start_delay,
    )
    observer = Observer(cluster.registry, settings.replicas).start()
    stack.callback(observer.stop)
    process, ready_s = procs.start(stack, subject, cluster, settings.workdir, name)
    return cluster, observer, process, ready_s


# ------------------------------------------------------------------ burst


def burst(
    settings: Settings,
    subject: procs.Subject,
    jobs: int,
    *,
    lifecycle: bool,
    budget: float,
    keep_latencies: bool = False,
) -> dict[str, Any]:
    """``jobs`` TFJobs in one burst against ``subject`` (see module docstring)."""
    busy = settle()
    result: dict[str, Any] = {"subject": subject.label, "jobs": jobs, "load_at_start": load()}
    result["machine_busy_at_start"] = busy
    with contextlib.ExitStack() as stack:
        name = f"{subject.kind}-{jobs}-{int(time.time() * 1000) % 100000}"
        cluster, observer, process, ready_s = _setup(stack, settings, subject, jobs, name)
        result["ready_s"] = rnd(ready_s)
        result["startup_cpu_s"] = rnd(process.cpu(), 3)
        time.sleep(0.5)  # let the informers' initial lists finish before the burst
        idle = process.usage()
        threads_idle = process.thread_cpu()
        before = lc.request_counts(cluster)
        cluster_cpu = lc.ClusterCPU()
        process.start_profile()

        t0 = time.monotonic()
        for job in job_names(jobs):
            observer.expect(job)
            manifest = tfjob_manifest(job, settings.ps, settings.workers, settings.run_seconds)
            cluster.registry.create(lc.TFJOBS, NAMESPACE, manifest)
        result["create_burst_s"] = rnd(time.monotonic() - t0)
        deadline = t0 + budget
        alive = process.alive
        all_objects = observer.wait(lambda: observer.all_objects() or not alive(), deadline)
        at_objects = process.usage()
        result["cluster_cpu_s_to_all_objects"] = cluster_cpu.seconds()
        complete = all_objects and alive()
        if lifecycle and complete:
            cleanup = jobs * settings.ps
            complete = observer.wait(
                lambda: (observer.succeeded + observer.failed >= jobs
                         and observer.pods_deleted >= cleanup
                         and observer.services_deleted >= cleanup)
                or not alive(),
                deadline,
            )  # fmt: skip
            result["all_succeeded_s"] = rnd(observer.last_success - t0) if complete else None
        # every subject's last requests follow its objects (events, status writes, success
        # and cleanup in a lifecycle): its CPU and the cluster's run until it is quiet
        # (a 5,000-job burst's trailing status writes and events take over a minute)
        quiet_at, cpu_at_last, cluster_at_last = _wait_quiescent(
            cluster, process, cluster_cpu, time.monotonic() + max(60.0, 0.03 * jobs)
        )
        after = lc.request_counts(cluster)
        process.stop_profile()
        if threads_idle:
            result["cpu_ms_per_job_by_thread"] = _by_thread(threads_idle, process, jobs)
        result["cluster_cpu_s"] = cluster_cpu.seconds()
        result["cluster_cpu_by_thread"] = cluster_cpu.by_thread()
        if not alive():
            result["exit_code"] = process.proc.returncode
            result["log_tail"] = process.tail()
        result["complete"] = bool(complete and alive())
        result.update(_latencies(observer, t0, keep_latencies))
        result.update(_cpu_and_memory(idle, at_objects, process, cpu_at_last, jobs))
        requests = lc.diff(after, before)
        result.update(_request_figures(requests, observer, jobs))
        result["quiescent_after_s"] = rnd(quiet_at - t0) if quiet_at else None
        result["events_stored"] = lc.events_by_reason(cluster.registry, COMPONENT)
        result["cluster_cpu_ms_per_job"] = rnd(1000 * result["cluster_cpu_s_to_all_objects"] / jobs)
        # all the cluster's work for the jobs (their pods' start included), to the subject's
        # last request: a short burst's window to all objects holds less of it than a long
        # one's
        total = 1000 * cluster_at_last / jobs if quiet_at else None
        result["cluster_cpu_ms_per_job_total"] = rnd(total)
        if result.get("cpu_s_lifecycle") and result["cluster_cpu_s"]:
            # the subject's CPU over the local cluster's in the same run: both slow down alike
            # when the machine is busy, so this compares runs taken at different loads
            result["cpu_vs_cluster"] = rnd(result["cpu_s_lifecycle"] / result["cluster_cpu_s"], 3)
        result["load_at_end"] = load()
    return result


def _by_thread(
    before: dict[str, float], process: procs.MeasuredProcess, jobs: int
) -> dict[str, float]:
    """The subject's CPU per job since ``before`` by kind of thread (numbered threads of one
    pool together: ``create-0`` .. ``create-7`` as ``create``), largest first."""
    spent: dict[str, float] = {}
    for name, seconds in process.thread_cpu().items():
        kind = re.sub(r"(-\d+)+$", "", name)
        spent[kind] = spent.get(kind, 0.0) + seconds - before.get(name, 0.0)
    per_job = {k: 1000 * v / jobs for k, v in spent.items() if 1000 * v / jobs >= 0.005}
    return {k: round(v, 2) for k, v in sorted(per_job.items(), key=lambda kv: -kv[1])}


def _wait_quiescent(
    cluster: Any,
    process: procs.MeasuredProcess,
    cluster_cpu: lc.ClusterCPU,
    deadline: float,
    quiet: float = 3.0,
) -> tuple[float | None, float, float]:
    """Wait until the subject makes no request (lock renewals aside) for ``quiet`` seconds.
    Returns when its last request was seen (None at the deadline), and its CPU and the
    local cluster's then (the quiet seconds after it are idle time, not the jobs' work)."""
    last = lc.total(lc.request_counts(cluster))
    last_change, cpu = time.monotonic(), process.cpu() if process.alive() else 0.0
    cluster_seconds = cluster_cpu.seconds()
    while time.monotonic() < deadline and process.alive():
        time.sleep(0.25)
        now = lc.total(lc.request_counts(cluster))
        if now != last:
            last, last_change, cpu = now, time.monotonic(), process.cpu()
            cluster_seconds = cluster_cpu.seconds()
        elif time.monotonic() - last_change >= quiet:
            return last_change, cpu, cluster_seconds
    return None, cpu, cluster_seconds


def _latencies(obs: Observer, t0: float, keep: bool) -> dict[str, Any]:
    per_job = [
        at - job.created
        for job in obs.jobs.values()
        if (at := job.all_objects_at(obs.replicas)) is not None
    ]
    everything = max((job.all_objects_at(obs.replicas) or 0.0) for job in obs.jobs.values())
    out: dict[str, Any] = {
        "pods_seen": obs.pods_seen,
        "services_seen": obs.services_seen,
        "jobs_succeeded": obs.succeeded,
        "jobs_failed": obs.failed,
        "all_pods_and_services_s": rnd(everything - t0) if obs.all_objects() else None,
        "per_job_p50_s": rnd(percentile(per_job, 50)),
        "per_job_p99_s": rnd(percentile(per_job, 99)),
        "per_job_max_s": rnd(max(per_job) if per_job else None),
    }
    if out["all_pods_and_services_s"]:
        out["ms_per_job"] = rnd(1000 * out["all_pods_and_services_s"] / len(obs.jobs))
    if keep:
        out["per_job_latencies_s"] = sorted(round(x, 3) for x in per_job)
    return out


def _cpu_and_memory(
    idle: dict[str, Any],
    at_objects: dict[str, Any],
    process: procs.MeasuredProcess,
    cpu_at_last: float | None,
    jobs: int,
) -> dict[str, Any]:
    """CPU to all objects, and to the last request (``cpu_ms_per_job``) when waited for."""
    start_cpu = idle.get("cpu_s", 0.0)
    to_objects = (at_objects.get("cpu_s") or start_cpu) - start_cpu
    out = {
        "idle_rss_mib": idle.get("rss_mib"),
        "peak_rss_mib": round(process.peak_rss / 2**20, 1),
        "threads": at_objects.get("threads"),
        "cpu_s_to_all_objects": rnd(to_objects, 3),
        "cpu_ms_per_job_to_all_objects": rnd(1000 * to_objects / jobs),
    }
    if cpu_at_last is not None:
        out["cpu_s_lifecycle"] = rnd(cpu_at_last - start_cpu, 3)
        out["cpu_ms_per_job"] = rnd(1000 * (cpu_at_last - start_cpu) / jobs)
    return out


def _request_figures(requests: Any, obs: Observer, jobs: int) -> dict[str, Any]:
    counted = {k: n for k, n in requests.items() if k[2] not in lc.LOCK_RESOURCES}
    total = sum(counted.values())

    def verb(v: str, resource: str) -> int:
        return sum(n for k, n in counted.items() if k[1] == v and k[2] == resource)

    deleted = {"pods": obs.pods_deleted, "services": obs.services_deleted}
    return {
        "requests_total": int(total),
        "requests_per_job": rnd(total / jobs),
        "requests_per_job_by_kind": lc.by_verb_resource(Counter(counted), jobs),
        "requests_by_code": lc.by_code(requests),
        "conflicts_409": int(sum(n for k, n in counted.items() if k[3] == 409)),
        "conflicts_409_by_kind": lc.by_verb_resource(
            Counter({k: n for k, n in counted.items() if k[3] == 409})
        ),
        "lock_requests": int(sum(n for k, n in requests.items() if k[2] in lc.LOCK_RESOURCES)),
        "objects_deleted": deleted,
        "deletes_per_object": {
            kind: rnd(verb("delete", kind) / n) if n else None for kind, n in deleted.items()
        },
        "events_sent": verb("create", "events") + verb("patch", "events"),
    }


# ------------------------------------------------------------------ steady load

_DEPTH = re.compile(r"^workqueue_depth\{[^}]*\}\s+(\S+)", re.M)


def queue_depth(metrics_text: str) -> float | None:
    """Sum of ``workqueue_depth`` samples in a Prometheus exposition; None when absent."""
    values = [float(v) for v in _DEPTH.findall(metrics_text)]
    return sum(values) if values else None


def steady(
    settings: Settings, subject: procs.Subject, rate: float, duration: float
) -> dict[str, Any]:
    """TFJobs at ``rate`` per second for ``duration`` seconds (see module docstring)."""
    count = int(rate * duration)
    result: dict[str, Any] = {"subject": subject.label, "rate_per_s": rate, "jobs": count}
    result["machine_busy_at_start"] = settle()
    result["load_at_start"] = load()
    with contextlib.ExitStack() as stack:
        cluster, observer, process, _ = _setup(stack, settings, subject, count, f"steady-{count}")
        time.sleep(0.5)
        cpu0 = process.cpu()
        depths: list[tuple[float, float]] = []
        stop = threading.Event()
        t0 = time.monotonic()
        scraper = threading.Thread(
            target=_scrape_depth, args=(process, t0, depths, stop), daemon=True
        )
        scraper.start()
        stack.callback(stop.set)
        names = job_names(count)
        for i, job in enumerate(names):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            observer.expect(job)
            manifest = tfjob_manifest(job, settings.ps, settings.workers, settings.run_seconds)
            cluster.registry.create(lc.TFJOBS, NAMESPACE, manifest)
        result["creation_s"] = rnd(time.monotonic() - t0)
        result["achieved_rate_per_s"] = rnd(count / max(1e-9, time.monotonic() - t0))
        want = settings.replicas
        observer.wait(
            lambda: all(j.all_pods_at(want) is not None for j in observer.jobs.values()),
            time.monotonic() + 60,
        )
        stop.set()
        scraper.join(5)
        per_job = [
            at - job.created
            for job in observer.jobs.values()
            if (at := job.all_pods_at(want)) is not None
        ]
        result["jobs_with_all_pods"] = len(per_job)
        result["p50_s"] = rnd(percentile(per_job, 50), 3)
        result["p99_s"] = rnd(percentile(per_job, 99), 3)
        result["max_s"] = rnd(max(per_job) if per_job else None, 3)
        result["cpu_s"] = rnd(process.cpu() - cpu0, 2)
        result["depth_series"] = [(round(t, 1), d) for t, d in depths]
        values = [d for _, d in depths]
        result["depth_max"] = max(values) if values else None
        result["depth_mean"] = rnd(sum(values) / len(values)) if values else None
        result["load_at_end"] = load()
    return result


def _scrape_depth(
    process: procs.MeasuredProcess, t0: float, out: list[Any], stop: threading.Event
) -> None:
    while not stop.wait(1.0):
        with contextlib.suppress(Exception):
            depth = queue_depth(process.scrape())
            if depth is not None:
                out.append((time.monotonic() - t0, depth))


# ------------------------------------------------------------------ memory


def memory(
    settings: Settings, subject: procs.Subject, pod_counts: tuple[int, ...]
) -> dict[str, Any]:
    """Start-up CPU and idle RSS, then RSS with ``pod_counts`` pods cached."""
    result: dict[str, Any] = {"subject": subject.label, "load_at_start": load()}
    with contextlib.ExitStack() as stack:
        # the watch history holds every event of the pods to come, as a real API server's
        # (five minutes of etcd history) would for a flood this short: a watcher that falls
        # behind then re-watches instead of relisting, and RSS measures the cache, not a relist
        cluster = lc.start_cluster(
            stack, max(pod_counts, default=0), endpoints=False, start_delay=settings.start_delay
        )
        process, ready_s = procs.start(stack, subject, cluster, settings.workdir, "memory")
        result["ready_s"] = rnd(ready_s)
        result["startup_cpu_s"] = rnd(process.cpu(), 3)
        process.wait_settled()
        idle = process.usage()
        result["idle_rss_mib"] = idle.get("rss_mib")
        result["idle_threads"] = idle.get("threads")
        points: list[dict[str, Any]] = [{"pods": 0, "rss_mib": idle.get("rss_mib")}]
        owner = cluster.registry.create(lc.CONFIGMAPS, NAMESPACE, {"metadata": {"name": "owner"}})
        made = 0
        for count in pod_counts:
            t = time.monotonic()
            made = _inert_pods(cluster.registry, owner, made, count)
            created_s = time.monotonic() - t
            process.wait_settled(timeout=300)
            usage = process.usage()
            points.append(
                {"pods": count, "rss_mib": usage.get("rss_mib"), "create_s": rnd(created_s)}
            )
        result["points"] = points
        if len(points) >= 3:
            (a, b) = points[-2], points[-1]
            grown = (b["rss_mib"] - a["rss_mib"]) * 2**20
            result["bytes_per_cached_pod"] = int(grown / max(1, b["pods"] - a["pods"]))
        result["load_at_end"] = load()
    return result


def _inert_pods(registry: Any, owner: dict[str, Any], start: int, stop: int) -> int:
    """Pods ``start..stop-1`` shaped like the operator's, Running on a node that does not
    exist, owned by ``owner``; returns ``stop``."""
    owner_job = {
        "metadata": {"name": "cache", "uid": owner["metadata"]["uid"]},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 4}}},
    }
    template = {"spec": {"containers": [{"name": "tensorflow", "image": "bench/tensorflow:none"}]}}
    status = {
        "phase": "Running",
        "podIP": "127.1.2.3",
        "hostIP": "127.0.0.1",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {
                "name": "tensorflow",
                "ready": True,
                "restartCount": 0,
                "image": "bench/tensorflow:none",
                "imageID": "",
                "containerID": "sim://0",
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            }
        ],
    }
    for i in range(start, stop):
        pod = floor_pod(owner_job, "worker", i, template)
        ref = pod["metadata"]["ownerReferences"][0]
        ref.update(apiVersion="v1", kind="ConfigMap", name="owner")
        pod["spec"]["nodeName"] = "bench-phantom-node"
        created = registry.create_shared(lc.PODS, NAMESPACE, pod)
        body = {**created, "status": status}
        registry.update_shared(
            lc.PODS, NAMESPACE, pod["metadata"]["name"], body, subresource="status"
        )
    return stop
