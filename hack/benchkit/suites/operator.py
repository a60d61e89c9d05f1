"""Operator benchmarks (the operator and efficiency budgets): the real ``tf-operator`` against the local cluster,
beside a bare threaded client (the floor), the lean lifecycle client and optionally a
reference binary; and the local cluster itself against an older tree's.

Scenarios (each in a fresh in-process local cluster with the simulated kubelet and the
endpoints controller on; see ``hack/benchkit/scenarios.py``), after ``cluster``:

- ``cluster``: the bare client's 2,000 creates against this tree's local cluster and against
  main at 8071805, each a process of its own, rounds alternating (``benchkit.clusterspeed``).

- ``burst``: 200 TFJobs (1 PS + 4 workers) at once, for the floor (pods, services, their
  events and a status write; and pods + services only), the lean lifecycle client (the
  fewest requests of a whole lifecycle over our own REST client: ``benchkit/lean.py``), the
  operator at default flags and at ``--threadiness 4``: time to all pods + services,
  per-job p50/p99, CPU per job
  lifecycle (create to Succeeded and cleanup, from /proc), requests per job by verb and
  resource, 409s, deletes per object, events sent and stored.
- ``scaling``: 100, 1,000 and 5,000 jobs in one burst, operator and floor, workers running
  throughout (so every size does the same work per job): time per job, and the local
  cluster's own CPU per job for the floor's traffic (it must stay flat too).
- ``steady``: 10 jobs/s for 2 minutes; p99 job created -> all pods created; workqueue depth
  scraped from the operator's /metrics every second.
- ``memory``: start-up CPU and idle RSS, then RSS with 10,000 and 50,000 pods cached.
- ``real``: the floor and the operator side by side on the real control plane (etcd,
  kube-apiserver, kube-controller-manager, kube-scheduler binding the pods; our simulated
  kubelets over HTTPS), 200 and 1,000 jobs in one burst, workers running throughout: time
  per job, CPU per job, and kube-apiserver's requests per job from its
  ``apiserver_request_total`` (every client's: it has no client label;
  ``hack/benchkit/realplane.py``).
- ``reference``: when ``TFOP_REFERENCE_BIN`` names a binary (e.g. tf-operator v0.5.3), a
  small burst (20 jobs: v0.5.3's client is throttled at 5 QPS) and the memory scenario,
  through the same code.

``--quick`` shrinks every scenario (about 3 minutes). Human-readable figures go to stdout;
the last line is ``BENCH_RESULT {json}`` (figures and goals) for ``hack/bench.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import clusterspeed, goals, procs, profile, realplane, scenarios, stats
from benchkit.workload import minimum_requests_per_job

MARKER = "BENCH_RESULT "
SCENARIOS = ("cluster", "burst", "scaling", "steady", "memory", "reference", "real")
SCALING_RUN_SECONDS = 3600.0
SMALL_BURST_RUNS = 3  # runs of the smallest scaling burst; the median counts


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """Sizes of every scenario, full or quick."""
    if args.quick:
        sizes = {"burst": 50, "scaling": [50, 200], "steady_s": 20, "memory": [2000, 5000]}
        sizes["reference_jobs"] = 5
        sizes["real"] = [20, 50]
    else:
        sizes = {"burst": 200, "scaling": [100, 1000, 5000], "steady_s": 120}
        sizes["memory"] = [10000, 50000]
        sizes["reference_jobs"] = 20
        sizes["real"] = [200, 1000]
    for key in ("burst", "scaling", "steady_s", "memory", "reference_jobs", "real"):
        override = getattr(args, key, None)
        if override is not None:
            sizes[key] = override
    sizes["steady_rate"] = args.steady_rate
    return sizes


def run(args: argparse.Namespace, settings: scenarios.Settings) -> dict[str, Any]:
    sizes = plan(args)
    fig: dict[str, Any] = {"plan": sizes}
    fig["minimum_requests_per_job"] = sum(
        minimum_requests_per_job(settings.ps, settings.workers).values()
    )
    wanted = set(args.only or SCENARIOS)

    def step(name: str, fn: Any, *a: Any, **kw: Any) -> Any:
        print(f"-- {name} (load {scenarios.load()})", flush=True)
        began = time.monotonic()
        try:
            out = fn(*a, **kw)
        except (RuntimeError, OSError) as err:
            print(f"   failed: {err}", flush=True)
            return {"error": str(err), "complete": False}
        print(f"   {_summary(out)} [{time.monotonic() - began:.0f} s]", flush=True)
        return out

    if "cluster" in wanted:
        fig["cluster_side_by_side"] = step(
            "cluster: the bare client's creates, this tree and main at "
            f"{clusterspeed.BASELINE_COMMIT} side by side",
            clusterspeed.side_by_side,
            rounds=1 if args.quick else clusterspeed.ROUNDS,
            log=lambda line: print(line, flush=True),
        )
    n = sizes["burst"]
    if "burst" in wanted:
        # the floor runs before and after the operators; the faster run counts (the ratio to
        # it is then the conservative one, and a load spike on the machine is less likely
        # to flatter the operator)
        for key, subject, lifecycle in (
            ("floor", procs.floor("full"), False),
            ("floor_objects", procs.floor("objects"), False),
            ("lean", _instrumented(args, procs.lean(), "lean", profile=False), True),
            ("operator_default", _instrumented(args, procs.operator(), "default"), True),
            ("operator_t4", _instrumented(args, procs.operator(4), "threadiness4"), True),
            ("floor_again", procs.floor("full"), False),
        ):
            fig[key] = step(
                f"burst {n}: {subject.label}",
                scenarios.burst,
                settings,
                subject,
                n,
                lifecycle=lifecycle,
                budget=args.budget,
                keep_latencies=True,
            )
            if fig[key].get("cpu_ms_per_job_by_thread"):
                print(f"   CPU ms per job by thread: {fig[key]['cpu_ms_per_job_by_thread']}")
            if subject.profile and Path(subject.profile).exists():
                summary = profile.summarise(profile.read_stacks(Path(subject.profile)))
                print(f"   profile of {subject.label} ({subject.profile}):")
                profile.print_summary(summary)
                fig[key]["profile"] = summary
        fig["floor"] = _faster(fig.pop("floor"), fig.pop("floor_again"))
    if "scaling" in wanted:
        # workers keep running, so every size does the same work per job: creation and start
        # (with short workers a long burst also holds the early jobs' success and cleanup)
        long_running = dataclasses.replace(settings, run_seconds=SCALING_RUN_SECONDS)
        fig["scaling"] = {"operator": [], "floor": []}
        smallest = min(sizes["scaling"])
        for count in sizes["scaling"]:
            # the smallest burst is the ratio's denominator and lasts a second or two, so
            # its time per job swings with anything else on the machine: it runs three
            # times (interleaved) and the median run counts, the others kept beside it
            runs: dict[str, list[dict[str, Any]]] = {"floor": [], "operator": []}
            for _ in range(SMALL_BURST_RUNS if count == smallest else 1):
                for key, subject in (
                    ("floor", procs.floor("full")),
                    ("operator", procs.operator()),
                ):
                    runs[key].append(
                        step(
                            f"scaling {count}: {subject.label}",
                            scenarios.burst,
                            long_running,
                            subject,
                            count,
                            lifecycle=False,
                            budget=max(args.budget, count * 0.2),
                        )
                    )
            for key, done in runs.items():
                fig["scaling"][key].append(stats.median_run(done))
    if "steady" in wanted:
        fig["steady"] = step(
            f"steady {sizes['steady_rate']:g}/s for {sizes['steady_s']} s",
            scenarios.steady,
            settings,
            procs.operator(),
            sizes["steady_rate"],
            sizes["steady_s"],
        )
    if "memory" in wanted:
        fig["memory"] = step(
            "memory", scenarios.memory, settings, procs.operator(), tuple(sizes["memory"])
        )
    if "reference" in wanted:
        fig["reference"] = _reference(args, settings, sizes, step)
    if "real" in wanted:
        # the floor and the operator side by side on kube-apiserver, as in the scaling
        # scenario (workers running throughout)
        long_running = dataclasses.replace(settings, run_seconds=SCALING_RUN_SECONDS)
        fig["real_control_plane"] = {"floor": [], "operator": []}
        for count in sizes["real"]:
            for key, subject in (("floor", procs.floor("full")), ("operator", procs.operator())):
                fig["real_control_plane"][key].append(
                    step(
                        f"real control plane {count}: {subject.label}",
                        realplane.burst,
                        long_running,
                        subject,
                        count,
                        budget=max(args.budget, count * 0.3),
                    )
                )
    return fig


def _faster(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The run that got all pods and services first, with the other's time alongside."""

    def took(run: dict[str, Any]) -> float:
        return run.get("all_pods_and_services_s") or float("inf")

    best, other = (a, b) if took(a) <= took(b) else (b, a)
    best["other_run_all_pods_and_services_s"] = other.get("all_pods_and_services_s")
    return best


def _instrumented(
    args: argparse.Namespace, subject: procs.Subject, name: str, profile: bool = True
) -> procs.Subject:
    """``subject`` under py-spy with ``--profile``, counting its threads' CPU with
    ``--thread-cpu``."""
    if args.thread_cpu:
        path = Path(tempfile.mkdtemp(prefix="bench-thread-cpu-")) / f"{name}.json"
        subject = procs.with_thread_cpu(subject, path)
    if not args.profile or not profile:
        return subject
    args.profile.mkdir(parents=True, exist_ok=True)
    return procs.profiled(subject, args.profile.resolve() / f"operator-{name}.txt")


def _reference(
    args: argparse.Namespace, settings: scenarios.Settings, sizes: dict[str, Any], step: Any
) -> dict[str, Any]:
    binary = procs.reference_binary()
    if binary is None:
        return {"not_run": f"{procs.REFERENCE_ENV} does not name an executable binary"}
    subject = procs.reference(binary)
    jobs = sizes["reference_jobs"]
    return {
        "binary": binary,
        "burst": step(
            f"reference burst {jobs}",
            scenarios.burst,
            settings,
            subject,
            jobs,
            lifecycle=True,
            budget=max(args.budget, jobs * 60.0),
            keep_latencies=True,
        ),
        "memory": step(
            "reference memory", scenarios.memory, settings, subject, tuple(sizes["memory"])
        ),
    }


def _summary(out: dict[str, Any]) -> str:
    keys = (
        "ratio_wall_s",
        "ratio_server_cpu_s",
        "all_pods_and_services_s",
        "per_job_p50_s",
        "per_job_p99_s",
        "cpu_ms_per_job",
        "cpu_vs_cluster",
        "requests_per_job",
        "apiserver_requests_per_job",
        "ms_per_job",
        "conflicts_409",
        "cluster_cpu_ms_per_job",
        "p99_s",
        "depth_max",
        "idle_rss_mib",
        "startup_cpu_s",
        "points",
        "complete",
    )
    return ", ".join(f"{k}={out[k]}" for k in keys if k in out)


def print_goals(rows: list[goals.Goal], title: str) -> None:
    print(f"\n== {title}: measured / bound / pass")
    for g in rows:
        verdict = {True: "PASS", False: "FAIL", None: "n/a"}[g.passed]
        print(f"  [{verdict:4}] {g.budget}: {g.what}")
        print(f"         measured {g.measured}; goal {g.goal}; {g.compared_with}".rstrip("; "))
        if g.superseded_by:
            print(f"         restated as {g.superseded_by}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about 3 minutes)")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, help="scenarios to run")
    parser.add_argument("--burst", type=int, help="jobs in the burst scenario")
    parser.add_argument(
        "--scaling", type=lambda s: [int(x) for x in s.split(",")], help="e.g. 100,1000,5000"
    )
    parser.add_argument("--steady-s", dest="steady_s", type=int, help="steady load seconds")
    parser.add_argument("--steady-rate", type=float, default=10.0, help="jobs per second")
    parser.add_argument(
        "--memory", type=lambda s: [int(x) for x in s.split(",")], help="cached pod counts"
    )
    parser.add_argument("--reference-jobs", dest="reference_jobs", type=int)
    parser.add_argument(
        "--real",
        type=lambda s: [int(x) for x in s.split(",")],
        help="burst sizes on the real control plane, e.g. 200,1000",
    )
    parser.add_argument("--budget", type=float, default=300, help="seconds per burst run")
    parser.add_argument("--no-endpoints", action="store_true", help="endpoints controller off")
    parser.add_argument("--keep", action="store_true", help="keep the process logs")
    parser.add_argument(
        "--profile",
        type=Path,
        help="run the burst's operators under py-spy (GIL samples) writing raw stacks to this "
        "directory, and print where their CPU goes (figures of profiled runs are distorted)",
    )
    parser.add_argument(
        "--thread-cpu",
        action="store_true",
        help="count the burst's operators' and lean client's CPU per job by thread (job "
        "workers, create helpers, event senders, each informer), read from each thread's CPU "
        "clock; their totals then include the counting thread's (listed too)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    workdir = Path(tempfile.mkdtemp(prefix="bench-operator-"))
    settings = scenarios.Settings(workdir=workdir, endpoints=not args.no_endpoints)
    began = time.monotonic()
    code = 0
    try:
        figures = run(args, settings)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        if args.keep:
            print(f"process logs kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    figures["settings"] = {
        "quick": args.quick,
        "endpoints_controller": settings.endpoints,
        "ps": settings.ps,
        "workers": settings.workers,
        "worker_run_seconds": settings.run_seconds,
        "sim_start_delay_s": settings.start_delay,
        "total_s": round(time.monotonic() - began, 1),
    }
    rows, rows26 = goals.evaluate(figures), goals.evaluate_efficiency(figures)
    print_goals(rows, "operator budgets")
    print_goals(rows26, "efficiency budgets")
    if any(isinstance(v, dict) and v.get("error") for v in figures.values()):
        code = 1
    result = {
        "figures": figures,
        "goals": [g.as_dict() for g in rows],
        "goals26": [g.as_dict() for g in rows26],
    }
    print(MARKER + json.dumps(result))
    return code


if __name__ == "__main__":
    sys.exit(main())
