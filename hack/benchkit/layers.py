"""What each layer of the local cluster's API server costs per request (behind the local
cluster's create-throughput budget).

A local cluster runs in this process as the benchmarks start it (simulated kubelets, two
nodes, the endpoints controller on, the TFJob CRD); 200 TFJobs are created through the
registry, then the bare client (``benchkit.creates``, a process of its own) sends their
1,000 pods and 1,000 services over HTTP. Meanwhile the functions that make up each layer of
the request path are timed in thread CPU (``time.thread_time_ns``), exclusively (a layer's
time leaves out the timed layers it calls), on the threads serving HTTP requests only: the
scheduler, kubelets and controllers writing through the registry in the same process are
not requests, and their CPU is shown per thread group beside the table.

``LAYERS`` names the functions by module and attribute; one that a tree does not have is
skipped, so the same table can be taken of an older tree (run it with that tree's
interpreter and ``PYTHONPATH`` pointing at this kit). Each timed call costs about a
microsecond of the timer itself (reported as ``timer_overhead_us``), charged to the layer
that called it.

Usage: ``python -m benchkit.layers [--jobs 200] [--threads 4] [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchkit import cluster as lc
from benchkit.paths import CRD_FILE
from benchkit.workload import NAMESPACE, job_names, tfjob_manifest

# (module, attribute path, layer); the request thread's own CPU outside them is "the rest"
LAYERS: list[tuple[str, str, str]] = [
    (
        "localcluster.controlplane.emulated.serving.httpcore",
        "_Handler.handle",
        "HTTP: connection loop",
    ),
    (
        "localcluster.controlplane.emulated.serving.httpcore",
        "_Handler._read_request",
        "HTTP: read the request",
    ),
    (
        "localcluster.controlplane.emulated.serving.httpcore",
        "Responder.send",
        "HTTP: write the response",
    ),
    ("localcluster.controlplane.emulated.server", "APIServer._app", "routing and dispatch"),
    ("localcluster.controlplane.emulated.server", "APIServer._route", "routing and dispatch"),
    ("localcluster.controlplane.emulated.server", "APIServer._resource", "routing and dispatch"),
    ("localcluster.controlplane.emulated.server", "APIServer._collection", "routing and dispatch"),
    ("localcluster.controlplane.emulated.server", "APIServer._item", "routing and dispatch"),
    ("localcluster.controlplane.emulated.server", "APIServer._written", "routing and dispatch"),
    (
        "localcluster.controlplane.emulated.auth.authenticator",
        "Authenticator.authenticate",
        "authentication (bearer token)",
    ),
    ("localcluster.controlplane.emulated.auth.filters", "impersonate", "impersonation"),
    (
        "localcluster.controlplane.emulated.auth.filters",
        "request_attributes",
        "authorization (RBAC)",
    ),
    (
        "localcluster.controlplane.emulated.auth.authorizer",
        "Authorizer.authorize",
        "authorization (RBAC)",
    ),
    (
        "localcluster.controlplane.emulated.auth.filters",
        "RequestAuth._record",
        "authorization (RBAC)",
    ),
    (
        "localcluster.controlplane.emulated.serving.faults",
        "Faults.before_request",
        "fault injection check",
    ),
    (
        "localcluster.controlplane.emulated.serving.request_metrics",
        "RequestMetrics.observe",
        "request metrics",
    ),
    ("localcluster.controlplane.emulated.serving.params", "object_body", "decoding: JSON body"),
    (
        "localcluster.controlplane.emulated.registry",
        "Registry._check_body",
        "decoding: typed (Go structs)",
    ),
    (
        "localcluster.controlplane.emulated.admission.decoding",
        "decode",
        "decoding: typed (Go structs)",
    ),
    ("localcluster.controlplane.emulated.registry", "detach", "decoding: typed (Go structs)"),
    ("localcluster.controlplane.emulated.registry", "strip_nulls", "decoding: typed (Go structs)"),
    ("localcluster.controlplane.emulated.admission.quantityfields", "rewrite", "quantity parsing"),
    (
        "localcluster.controlplane.emulated.auth.admission",
        "ServiceAccountAdmission.__call__",
        "admission (ServiceAccount, namespace)",
    ),
    (
        "localcluster.controlplane.emulated.registry",
        "Registry._check_namespace",
        "admission (ServiceAccount, namespace)",
    ),
    ("localcluster.controlplane.emulated.registry", "Registry._defaults", "defaulting"),
    ("localcluster.controlplane.emulated.registry", "Registry._prune", "pruning (CRD schemas)"),
    ("localcluster.controlplane.emulated.registry", "Registry._validate", "validation"),
    ("localcluster.controlplane.emulated.admission.schema", "validate", "validation"),
    ("localcluster.controlplane.emulated.admission.celrules", "validate", "validation: CEL rules"),
    ("localcluster.controlplane.emulated.registry", "Registry.create_shared", "registry: create"),
    ("localcluster.controlplane.emulated.registry", "Registry.update_shared", "registry: update"),
    ("localcluster.controlplane.emulated.registry", "Registry._write", "registry: update"),
    ("localcluster.controlplane.emulated.storage.store", "Store.commit", "storage: commit"),
    ("localcluster.controlplane.emulated.storage.watch", "Watch.offer", "watch fan-out"),
    ("localcluster.controlplane.emulated.storage.store", "Store.present", "encoding: present"),
    ("localcluster.controlplane.emulated.server", "dumps", "encoding: JSON"),
]
OBSERVERS = "commit observers (garbage collector)"

_local = threading.local()
_tallies: list[dict[str, list[int]]] = []  # one per request thread: layer -> [ns, calls]
_tallies_lock = threading.Lock()
_overhead = [0]  # ns a timed call costs its caller beyond the callee's own window


def _tally() -> dict[str, list[int]]:
    tally: dict[str, list[int]] | None = getattr(_local, "tally", None)
    if tally is None:
        tally = _local.tally = {}
        _local.stack = []
        with _tallies_lock:
            _tallies.append(tally)
    return tally


def timed(fn: Callable[..., Any], layer: str, starts_request: bool = False) -> Callable[..., Any]:
    """``fn`` charging its exclusive thread CPU to ``layer`` on request threads."""
    clock = time.thread_time_ns

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if starts_request:
            _local.request = True
        if not getattr(_local, "request", False):
            return fn(*args, **kwargs)
        tally = _tally()
        stack: list[list[int]] = _local.stack
        stack.append([0, 0])
        began = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            elapsed = clock() - began
            inner, children = stack.pop()
            entry = tally.setdefault(layer, [0, 0])
            # the timed calls it made cost the timer's overhead outside their own windows
            entry[0] += elapsed - inner - children * _overhead[0]
            entry[1] += 1
            if stack:
                stack[-1][0] += elapsed
                stack[-1][1] += 1

    return wrapper


def install(registry: Any, package: str) -> list[str]:
    """Time every layer this tree has (its local cluster being ``package``); returns the ones
    it lacks."""
    missing = []
    for module_name, path, layer in LAYERS:
        module_name = package + module_name.removeprefix("localcluster")
        try:
            owner: Any = importlib.import_module(module_name)
            *outer, attr = path.split(".")
            for part in outer:
                owner = getattr(owner, part)
            fn = getattr(owner, attr)
        except (ImportError, AttributeError):
            missing.append(f"{module_name}.{path}")
            continue
        setattr(owner, attr, timed(fn, layer, starts_request=attr == "handle"))
    observers = getattr(registry, "commit_observers", None)
    if observers is None:
        missing.append("Registry.commit_observers")
    else:
        observers[:] = [timed(o, OBSERVERS) for o in observers]
    return missing


def timer_overhead_ns(calls: int = 20000) -> float:
    """Thread CPU one timed call of an empty function adds."""
    _local.request = True
    empty = timed(lambda: None, "calibration")
    began = time.thread_time_ns()
    for _ in range(calls):
        empty()
    spent = time.thread_time_ns() - began
    _local.request = False
    _overhead[0] = int(spent / calls)
    return spent / calls


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's threads by name (digits removed), from /proc."""
    names = {t.native_id: re.sub(r"[-_]?\d+", "", t.name) for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError, ValueError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = names.get(int(task.name), "(other)")
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def start_cluster(stack: contextlib.ExitStack, package: str, pods: int) -> Any:
    """The benchmarks' local cluster (``benchkit.cluster.start_cluster``) from ``package``."""
    cluster_module = importlib.import_module(package)
    per_node = pods // 2 + 10
    cluster = cluster_module.LocalCluster(
        kubelet="simulated",
        nodes=2,
        node=cluster_module.NodeSpec(cpu="1000000", memory="100000Gi", pods=per_node),
        simulated=cluster_module.SimulatedTiming(start_delay=0.1),
        watch_history=max(10000, pods * 12),
    )
    cluster.start()
    stack.callback(cluster.stop)
    cluster.registry.create(lc.CRDS, None, yaml.safe_load(CRD_FILE.read_text()))
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(Exception):
            cluster.registry.list(lc.TFJOBS, NAMESPACE)
            return cluster
        if time.monotonic() > deadline:
            raise RuntimeError("the TFJob CRD was not served within 30 s")
        time.sleep(0.05)


def run(jobs: int, threads: int, package: str) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        cluster = start_cluster(stack, package, jobs * 5)
        missing = install(cluster.registry, package)
        overhead = timer_overhead_ns()
        _tallies.clear()
        for name in job_names(jobs):
            cluster.registry.create(lc.TFJOBS, NAMESPACE, tfjob_manifest(name))
        argv = [sys.executable, "-m", "benchkit.creates", f"--server={cluster.url}",
                f"--threads={threads}"]  # fmt: skip
        if cluster.server.token:
            argv.append(f"--token={cluster.server.token}")
        client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        stack.callback(client.kill)
        assert client.stdin is not None and client.stdout is not None
        client.stdout.readline()
        time.sleep(1.0)
        gc.collect()
        gc.freeze()  # as the benchmark's scenarios do: the set-up's heap is not the creates'

        with _tallies_lock:
            _tallies.clear()
        cpu_before, threads_before = time.process_time(), thread_cpu()
        client.stdin.write("go\n")
        client.stdin.flush()
        result = json.loads(client.stdout.readline())
        process_cpu = time.process_time() - cpu_before
        grown = {k: v - threads_before.get(k, 0.0) for k, v in thread_cpu().items()}
        by_thread = {k: round(v, 2) for k, v in sorted(grown.items(), key=lambda kv: -kv[1])
                     if v >= 0.02}  # fmt: skip
    requests = result["requests"]
    layers: dict[str, list[int]] = {}
    with _tallies_lock:
        for tally in _tallies:
            for layer, (ns, calls) in tally.items():
                entry = layers.setdefault(layer, [0, 0])
                entry[0] += ns
                entry[1] += calls
    per_request = {
        layer: round(ns / 1000 / requests, 1)
        for layer, (ns, _) in sorted(layers.items(), key=lambda kv: -kv[1][0])
    }
    return {
        "requests": requests,
        "codes": result["codes"],
        "wall_s": result["wall_s"],
        "process_cpu_s": process_cpu,
        "process_cpu_us_per_request": round(1e6 * process_cpu / requests, 1),
        "request_threads_us_per_request": round(sum(per_request.values()), 1),
        "layers_us_per_request": per_request,
        "calls_per_request": {k: round(v[1] / requests, 2) for k, v in layers.items()},
        "cpu_by_thread_s": by_thread,
        "timer_overhead_us": round(overhead / 1000, 2),
        "missing": missing,
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def print_table(figures: dict[str, Any]) -> None:
    print(
        f"{figures['requests']} creates, {figures['wall_s']} s, process CPU "
        f"{figures['process_cpu_us_per_request']} us per request, of which request threads "
        f"{figures['request_threads_us_per_request']} us (load {figures['load']})"
    )
    for layer, us in figures["layers_us_per_request"].items():
        calls = figures["calls_per_request"].get(layer, 0)
        print(f"  {us:8.1f} us  {layer} ({calls} calls)")
    print("  other threads (s):", figures["cpu_by_thread_s"])
    print(f"  timer overhead per timed call: {figures['timer_overhead_us']} us")
    if figures["missing"]:
        print("  not in this tree:", ", ".join(figures["missing"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--package", default="localcluster", help="the local cluster's package in this tree"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = run(args.jobs, args.threads, args.package)
    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
