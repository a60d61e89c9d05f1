"""The local cluster the benchmarks run against, in this process, and what it counts.

The API server, scheduler, simulated kubelets and endpoints controller run in the benchmark
process; the process under test talks to them over HTTP like any client. The benchmark
itself writes TFJobs and reads objects through the registry, so its own traffic never
shows in the server's per-client request counter.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import time
from collections import Counter
from typing import Any

import yaml

from benchkit.paths import CRD_FILE

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
EVENTS = ("", "v1", "events")
CONFIGMAPS = ("", "v1", "configmaps")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")

# A leader-election lock lives in one of these; its renewals never stop, so they are left
# out of "requests per job" and do not hold off quiescence.
LOCK_RESOURCES = frozenset({"endpoints", "leases", "configmaps"})

Key = tuple[str, str, str, int]  # (client, verb, resource, code)


def start_cluster(
    stack: contextlib.ExitStack,
    pods: int,
    *,
    endpoints: bool = True,
    start_delay: float = 0.1,
    nodes: int = 2,
) -> Any:
    """A simulated-kubelet cluster with room for ``pods`` pods and the TFJob CRD installed;
    stopped when ``stack`` unwinds."""
    from localcluster import LocalCluster, NodeSpec, SimulatedTiming

    per_node = math.ceil(pods / nodes) + 10
    cluster = LocalCluster(
        kubelet="simulated",
        nodes=nodes,
        node=NodeSpec(cpu="1000000", memory="100000Gi", pods=per_node),
        simulated=SimulatedTiming(start_delay=start_delay),
        watch_history=max(10000, pods * 12),
        endpoints=endpoints,
    )
    cluster.start()
    stack.callback(cluster.stop)
    cluster.registry.create(CRDS, None, yaml.safe_load(CRD_FILE.read_text()))
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(Exception):
            cluster.registry.list(TFJOBS, "default")
            return cluster
        if time.monotonic() > deadline:
            raise RuntimeError("the TFJob CRD was not served within 30 s")
        time.sleep(0.05)


RequestCounts = Counter[tuple[str, str, str, int]]  # (client, verb, resource, code) -> requests


def request_counts(cluster: Any, clients: set[str] | None = None) -> RequestCounts:
    """``Counter[(client, verb, resource, code)]`` of HTTP requests served so far, for the
    given clients (all when None)."""
    snapshot = cluster.server.request_metrics.snapshot()
    return Counter({k: n for k, n in snapshot.items() if clients is None or k[0] in clients})


def clients_since(cluster: Any, before: RequestCounts) -> set[str]:
    """Clients that made requests since ``before`` was taken."""
    now = request_counts(cluster)
    return {k[0] for k, n in now.items() if n > before.get(k, 0)}


def total(counts: RequestCounts, exclude: frozenset[str] = LOCK_RESOURCES) -> int:
    return int(sum(n for key, n in counts.items() if key[2] not in exclude))


def diff(after: RequestCounts, before: RequestCounts) -> RequestCounts:
    out = Counter(after)
    out.subtract(before)
    return Counter({k: v for k, v in out.items() if v})


def by_verb_resource(counts: RequestCounts, per: int = 1) -> dict[str, float]:
    """``{"<resource> <verb>": n / per}``, largest first, lock traffic apart."""
    grouped: Counter[str] = Counter()
    for (_, verb, resource, _), n in counts.items():
        grouped[f"{resource} {verb}"] += n
    return {k: round(v / per, 2) for k, v in grouped.most_common()}


def by_code(counts: RequestCounts) -> dict[str, int]:
    codes: Counter[str] = Counter()
    for (_, _, resource, code), n in counts.items():
        if resource not in LOCK_RESOURCES:
            codes[str(code)] += n
    return dict(sorted(codes.items()))


def events_by_reason(registry: Any, component: str | None = None) -> dict[str, int]:
    """Events stored in ``default`` by reason, counting aggregated repeats (``count``);
    only those whose source is ``component`` when given."""
    items, _ = registry.list(EVENTS, "default")
    reasons: Counter[str] = Counter()
    for event in items:
        source = (event.get("source") or {}).get("component") or event.get("reportingComponent")
        if component is None or source == component:
            reasons[event.get("reason", "")] += int(event.get("count") or 1)
    return dict(reasons.most_common())


def thread_cpu_by_group() -> dict[str, float]:
    """CPU seconds of this process's threads, grouped by name with digits removed."""
    import psutil

    names = {t.native_id: re.sub(r"[-_]?\d+", "", t.name) for t in threading.enumerate()}
    groups: dict[str, float] = {}
    for thread in psutil.Process().threads():
        group = names.get(thread.id, "(native)")
        groups[group] = groups.get(group, 0.0) + thread.user_time + thread.system_time
    return groups


class ClusterCPU:
    """CPU of this process (API server, scheduler, kubelets, endpoints, observers) from a mark."""

    def __init__(self) -> None:
        import psutil

        self._me = psutil.Process()
        self.mark()

    def mark(self) -> None:
        self._cpu = sum(self._me.cpu_times()[:2])
        self._threads = thread_cpu_by_group()

    def seconds(self) -> float:
        return round(sum(self._me.cpu_times()[:2]) - self._cpu, 2)

    def by_thread(self, top: int = 8) -> dict[str, float]:
        now = thread_cpu_by_group()
        grown = {name: cpu - self._threads.get(name, 0.0) for name, cpu in now.items()}
        largest = sorted(grown.items(), key=lambda item: item[1], reverse=True)[:top]
        return {name: round(cpu, 2) for name, cpu in largest if cpu >= 0.05}
