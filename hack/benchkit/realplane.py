"""The bare-client floor and the operator against the real control plane.

The same burst as the scaling scenario (``scenarios.burst``: N TFJobs at once, workers
running throughout), run on ``LocalCluster(control_plane="real", kubelet="simulated")``:
etcd, kube-apiserver, kube-controller-manager and kube-scheduler (which binds the pods),
with our simulated kubelets attached over HTTPS. The benchmark writes TFJobs and watches
pods, services and TFJobs through ``cluster.client``, as every test does on this backend.

What a real server lets us count cheaply: time to all pods and services (overall and per
job), the subject's CPU from /proc, and kube-apiserver's ``apiserver_request_total`` from
its /metrics. That counter has no client label, so its figure is every client's requests
per job (the subject's, the benchmark's TFJob creates, the scheduler's bindings, the
kubelets' status writes, the controller manager's), not the subject's alone.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import time
from collections import Counter
from typing import Any

import yaml

from benchkit import cluster as lc
from benchkit import procs
from benchkit.observe import Observer
from benchkit.paths import CRD_FILE
from benchkit.scenarios import Settings, load, settle
from benchkit.stats import percentile, rnd
from benchkit.workload import NAMESPACE, job_names, tfjob_manifest

_SAMPLE = re.compile(r"^(\w+)\{([^}]*)\}\s+(\S+)$", re.M)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def metric_samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of ``name`` in a Prometheus exposition, with its labels."""
    return [
        (dict(_LABEL.findall(labels)), float(value))
        for metric, labels, value in _SAMPLE.findall(text)
        if metric == name
    ]


def request_counts(text: str) -> Counter[tuple[str, str]]:
    """``apiserver_request_total`` as ``Counter[(resource[/subresource], VERB)]``."""
    counts: Counter[tuple[str, str]] = Counter()
    for labels, value in metric_samples(text, "apiserver_request_total"):
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        counts[(resource, labels.get("verb", ""))] += int(value)
    return counts


def watches(text: str) -> int:
    """Watches kube-apiserver is serving now (``apiserver_longrunning_requests``)."""
    return int(
        sum(v for labels, v in metric_samples(text, "apiserver_longrunning_requests")
            if labels.get("verb") == "WATCH")
    )  # fmt: skip


def scrape(cluster: Any) -> str:
    """kube-apiserver's /metrics (``cluster.client`` is an ``HttpClient`` on this backend)."""
    reply = cluster.client.request("GET", "/metrics")
    return str(reply.data.decode(errors="replace"))


def start_cluster(stack: contextlib.ExitStack, pods: int, settings: Settings) -> Any:
    """The real control plane with two simulated kubelets with room for ``pods`` pods, the
    TFJob CRD served; stopped when ``stack`` unwinds."""
    from localcluster import LocalCluster, NodeSpec, SimulatedTiming

    per_node = math.ceil(pods / 2) + 10
    cluster = LocalCluster(
        control_plane="real",
        kubelet="simulated",
        nodes=2,
        node=NodeSpec(cpu="1000000", memory="100000Gi", pods=per_node),
        simulated=SimulatedTiming(start_delay=settings.start_delay),
    )
    # tearing down, the kubelets' last status writes find kube-apiserver gone: urllib3 would
    # log a retry warning for each (callbacks run last first: quiet, stop, then restore)
    urllib3_log = logging.getLogger("urllib3")
    stack.callback(urllib3_log.setLevel, urllib3_log.level)
    stack.callback(cluster.stop)
    stack.callback(urllib3_log.setLevel, logging.ERROR)
    cluster.start()
    cluster.client.create(lc.CRDS, None, yaml.safe_load(CRD_FILE.read_text()))
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(Exception):
            cluster.client.list(lc.TFJOBS, NAMESPACE)
            return cluster
        if time.monotonic() > deadline:
            raise RuntimeError("the TFJob CRD was not served within 60 s")
        time.sleep(0.1)


def start_subject(
    stack: contextlib.ExitStack, subject: procs.Subject, cluster: Any, settings: Settings, name: str
) -> tuple[procs.MeasuredProcess, float]:
    """``subject`` started and ready: kube-apiserver serves its watches."""
    before = watches(scrape(cluster))
    process = procs.MeasuredProcess(subject, cluster, settings.workdir / f"{name}.log")
    stack.callback(process.stop)
    deadline = time.monotonic() + 90
    while watches(scrape(cluster)) < before + subject.watches:
        if not process.alive():
            raise RuntimeError(f"{subject.label} exited early:\n{process.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{subject.label} did not start watching in 90 s")
        time.sleep(0.1)
    return process, time.monotonic() - process.started


def burst(settings: Settings, subject: procs.Subject, jobs: int, budget: float) -> dict[str, Any]:
    """``jobs`` TFJobs at once against ``subject`` on the real control plane."""
    busy = settle()
    result: dict[str, Any] = {"subject": subject.label, "jobs": jobs, "load_at_start": load()}
    result["machine_busy_at_start"] = busy
    with contextlib.ExitStack() as stack:
        cluster = start_cluster(stack, jobs * settings.replicas, settings)
        result["kubernetes"] = cluster.real_plane.version if cluster.real_plane else None
        observer = Observer(cluster.client, settings.replicas).start()
        stack.callback(observer.stop)
        name = f"real-{subject.kind}-{jobs}-{int(time.time() * 1000) % 100000}"
        process, ready_s = start_subject(stack, subject, cluster, settings, name)
        result["ready_s"] = rnd(ready_s)
        process.wait_settled(window=1.0, timeout=30)
        idle = process.usage()
        before = request_counts(scrape(cluster))

        t0 = time.monotonic()
        for job in job_names(jobs):
            observer.expect(job)
            manifest = tfjob_manifest(job, settings.ps, settings.workers, settings.run_seconds)
            cluster.client.create(lc.TFJOBS, NAMESPACE, manifest)
        result["create_burst_s"] = rnd(time.monotonic() - t0)
        alive = process.alive
        done = observer.wait(lambda: observer.all_objects() or not alive(), t0 + budget)
        at_objects = process.usage()
        objects = request_counts(scrape(cluster))
        # its trailing work (events, status writes) ends when its CPU goes quiet
        cpu_at_last = process.wait_settled(window=2.0, timeout=max(60.0, 0.05 * jobs))
        after = request_counts(scrape(cluster))
        result["complete"] = bool(done and alive())
        if not alive():
            result["log_tail"] = process.tail()
        per_job = [
            at - job.created
            for job in observer.jobs.values()
            if (at := job.all_objects_at(settings.replicas)) is not None
        ]
        everything = max(per_job, default=0.0) and max(
            (j.all_objects_at(settings.replicas) or 0.0) for j in observer.jobs.values()
        )
        if observer.all_objects():
            result["all_pods_and_services_s"] = rnd(everything - t0)
            result["ms_per_job"] = rnd(1000 * (everything - t0) / jobs)
        result["per_job_p50_s"] = rnd(percentile(per_job, 50))
        result["per_job_p99_s"] = rnd(percentile(per_job, 99))
        start_cpu = idle.get("cpu_s", 0.0)
        to_objects = (at_objects.get("cpu_s") or start_cpu) - start_cpu
        result["cpu_ms_per_job_to_all_objects"] = rnd(1000 * to_objects / jobs)
        result["cpu_ms_per_job"] = rnd(1000 * (cpu_at_last - start_cpu) / jobs)
        result["peak_rss_mib"] = round(process.peak_rss / 2**20, 1)
        result.update(_requests(objects, after, before, jobs))
        result["load_at_end"] = load()
    return result


def _requests(
    objects: Counter[tuple[str, str]],
    after: Counter[tuple[str, str]],
    before: Counter[tuple[str, str]],
    jobs: int,
) -> dict[str, Any]:
    """kube-apiserver's requests (every client's) per job, leases left out (their renewals
    never stop)."""

    def spent(now: Counter[tuple[str, str]]) -> Counter[tuple[str, str]]:
        grown = Counter(now)
        grown.subtract(before)
        return Counter({k: n for k, n in grown.items() if n > 0 and k[0] != "leases"})

    whole = spent(after)
    by_kind = {f"{r} {v}": rnd(n / jobs) for (r, v), n in whole.most_common()}
    return {
        "apiserver_requests_per_job_to_all_objects": rnd(sum(spent(objects).values()) / jobs),
        "apiserver_requests_per_job": rnd(sum(whole.values()) / jobs),
        "apiserver_requests_per_job_by_kind": by_kind,
    }
