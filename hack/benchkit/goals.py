"""Issue 11's goals, judged from the figures the scenarios return.

``evaluate`` turns the operator benchmark's figures into rows of ``Goal``: what is measured,
the measured value, the goal, what it is compared with (the floor or the reference binary)
and whether it passes. A goal whose figures are missing is reported as not measured and
fails: the report never claims a pass it did not see.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from benchkit.stats import ratio

# Figures recorded in issue 11 for the Go v0.5.3 binary in this harness, used when no
# reference binary is run (the report says so).
RECORDED_REFERENCE = {"requests_per_job": 36.0, "rss_10k_pods_mib": 96.0}
# "down from" figures of issue 11 for our operator before this work.
IDLE_RSS_BEFORE_MIB = 53.0
STARTUP_CPU_BEFORE_S = 0.36
BURST_RATIO_GOAL = 1.5
CPU_PER_JOB_GOAL_MS = 5.0
SCALING_GOAL = 1.3
STEADY_P99_GOAL_S = 1.0


@dataclass
class Goal:
    number: int
    what: str
    measured: str
    goal: str
    compared_with: str
    passed: bool | None  # None: not measured

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: Any, unit: str = "", digits: int = 2) -> str:
    if value is None:
        return "not measured"
    if isinstance(value, float):
        value = f"{value:.{digits}f}"
    return f"{value}{unit}"


def _check(value: Any, test: Any) -> bool | None:
    return None if value is None else bool(test(value))


def evaluate(fig: dict[str, Any]) -> list[Goal]:
    goals: list[Goal] = []
    goals += _burst_goals(fig)
    goals += _cpu_goals(fig)
    goals += _scaling_goals(fig)
    goals += _steady_goals(fig)
    goals += _request_goals(fig)
    goals += _memory_goals(fig)
    return goals


def _burst_goals(fig: dict[str, Any]) -> list[Goal]:
    floor = (fig.get("floor") or {}).get("all_pods_and_services_s")
    objects = (fig.get("floor_objects") or {}).get("all_pods_and_services_s")
    out = []
    for key, label in (("operator_default", "defaults"), ("operator_t4", "--threadiness 4")):
        run = fig.get(key) or {}
        took = run.get("all_pods_and_services_s")
        r = ratio(took, floor)
        out.append(
            Goal(
                1,
                f"{run.get('jobs', '?')}-job burst to all pods + services, {label}",
                f"{_fmt(took, ' s')} = {_fmt(r, 'x')} floor "
                f"(p50 / p99 per job {_fmt(run.get('per_job_p50_s'))} / "
                f"{_fmt(run.get('per_job_p99_s'))} s)",
                f"<= {BURST_RATIO_GOAL}x floor",
                f"floor {_fmt(floor, ' s')} (pods + services only {_fmt(objects, ' s')})",
                _check(r, lambda v: v <= BURST_RATIO_GOAL),
            )
        )
    return out


def _cpu_goals(fig: dict[str, Any]) -> list[Goal]:
    out = []
    ref = (fig.get("reference") or {}).get("burst") or {}
    lean = fig.get("lean") or {}
    lean = lean if lean.get("complete") else {}
    for key, label in (("operator_default", "defaults"), ("operator_t4", "--threadiness 4")):
        run = fig.get(key) or {}
        cpu = run.get("cpu_ms_per_job") if run.get("complete") else None
        out.append(
            Goal(
                2,
                f"operator CPU per job lifecycle, {label}",
                _fmt(cpu, " ms"),
                f"<= {CPU_PER_JOB_GOAL_MS:g} ms",
                f"lean lifecycle client {_fmt(lean.get('cpu_ms_per_job'), ' ms')}; "
                f"floor {_fmt((fig.get('floor') or {}).get('cpu_ms_per_job'), ' ms')}; "
                f"reference {_fmt(ref.get('cpu_ms_per_job'), ' ms')}",
                _check(cpu, lambda v: v <= CPU_PER_JOB_GOAL_MS),
            )
        )
    return out


def scaling_ratio(points: list[dict[str, Any]], key: str = "ms_per_job") -> float | None:
    """Largest job count's ``key`` over the smallest's (both complete)."""
    done = sorted((p for p in points if p.get(key)), key=lambda p: p["jobs"])
    if len(done) < 2 or len(done) != len(points):
        return None
    return ratio(done[-1][key], done[0][key])


def _scaling_goals(fig: dict[str, Any]) -> list[Goal]:
    scaling = fig.get("scaling") or {}
    ops, floor = scaling.get("operator") or [], scaling.get("floor") or []
    counts = [p["jobs"] for p in ops]
    span = f"{min(counts)} -> {max(counts)} jobs" if counts else "no runs"
    r = scaling_ratio(ops)
    # the floor's traffic per job is the same at every size: the cluster's CPU for it must be
    # flat too. All of it counts, to the floor's last request: the window to all objects
    # holds a smaller share of it in a short burst than in a long one.
    cluster = scaling_ratio(floor, "cluster_cpu_ms_per_job_total")
    window = scaling_ratio(floor, "cluster_cpu_ms_per_job")
    return [
        Goal(
            3,
            f"time per job, {span} in one burst (endpoints controller on)",
            f"{_fmt(r, 'x')} ({' / '.join(_fmt(p.get('ms_per_job'), ' ms') for p in ops)})",
            f"<= {SCALING_GOAL}x",
            f"floor {_fmt(scaling_ratio(floor), 'x')}; operator CPU per job to its last "
            f"request {_fmt(scaling_ratio(ops, 'cpu_ms_per_job'), 'x')}",
            _check(r, lambda v: v <= SCALING_GOAL),
        ),
        Goal(
            3,
            f"local cluster CPU per job under the floor's traffic, {span} "
            "(API server, kubelets, scheduler, endpoints; to the floor's last request)",
            _fmt(cluster, "x"),
            f"<= {SCALING_GOAL}x (flat)",
            f"until all objects exist {_fmt(window, 'x')}; under the operator "
            f"{_fmt(scaling_ratio(ops, 'cluster_cpu_ms_per_job_total'), 'x')}",
            _check(cluster, lambda v: v <= SCALING_GOAL),
        ),
    ]


def depth_bounded(series: list[Any], rate: float) -> bool | None:
    """No more than 10 s of arrivals queued at any time, and the last third of the run no
    deeper on average than the first third plus one second of arrivals."""
    values = [d for _, d in series]
    if len(values) < 6:
        return None
    third = len(values) // 3
    first, last = values[:third], values[-third:]
    return bool(max(values) <= 10 * rate and sum(last) / third <= sum(first) / third + rate)


def _steady_goals(fig: dict[str, Any]) -> list[Goal]:
    run = fig.get("steady") or {}
    rate = run.get("rate_per_s") or 0
    p99 = run.get("p99_s") if run.get("jobs_with_all_pods") == run.get("jobs") else None
    bounded = depth_bounded(run.get("depth_series") or [], rate)
    what = f"steady {rate:g} jobs/s for {run.get('jobs', 0) / rate if rate else 0:.0f} s"
    return [
        Goal(
            4,
            f"{what}: p99 job created -> all pods created",
            f"{_fmt(p99, ' s', 3)} (p50 {_fmt(run.get('p50_s'), ' s', 3)})",
            f"< {STEADY_P99_GOAL_S:g} s",
            "",
            _check(p99, lambda v: v < STEADY_P99_GOAL_S),
        ),
        Goal(
            4,
            f"{what}: workqueue depth",
            f"max {_fmt(run.get('depth_max'))}, mean {_fmt(run.get('depth_mean'))}",
            "bounded",
            "",
            bounded,
        ),
    ]


def _request_goals(fig: dict[str, Any]) -> list[Goal]:
    ref_run = (fig.get("reference") or {}).get("burst") or {}
    ref = ref_run.get("requests_per_job")
    ref_label = (
        f"reference {ref} ({ref_run.get('jobs')} jobs)"
        if ref is not None
        else f"reference {RECORDED_REFERENCE['requests_per_job']:g} (recorded in issue 11)"
    )
    ceiling = ref if ref is not None else RECORDED_REFERENCE["requests_per_job"]
    minimum = fig.get("minimum_requests_per_job")
    out = []
    for key, label in (("operator_default", "threadiness 1"), ("operator_t4", "threadiness 4")):
        run = fig.get(key) or {}
        per_job = run.get("requests_per_job") if run.get("complete") else None
        deletes = run.get("deletes_per_object") or {}
        once = all(v == 1.0 for v in deletes.values()) if deletes else None
        conflicts = run.get("conflicts_409") if run.get("complete") else None
        stored = sum(
            v for k, v in (run.get("events_stored") or {}).items() if k != "LeaderElection"
        )
        sent = run.get("events_sent")
        out += [
            Goal(
                5,
                f"API requests per job lifecycle, {label}",
                f"{_fmt(per_job)} (minimum {minimum})",
                f"<= {ceiling:g}",
                ref_label,
                _check(per_job, lambda v: v <= ceiling),
            ),
            Goal(
                5,
                f"deletes per object, 409 conflicts, {label}",
                f"pods {_fmt(deletes.get('pods'))}, services {_fmt(deletes.get('services'))}; "
                f"{_fmt(conflicts)} x 409",
                "1 each; 0 x 409",
                "",
                None if once is None or conflicts is None else once and conflicts == 0,
            ),
            Goal(
                5,
                f"events sent / stored, {label}",
                f"{_fmt(sent)} / {stored}",
                "none dropped",
                "",
                None if sent is None else stored >= sent,
            ),
        ]
    return out


def _memory_goals(fig: dict[str, Any]) -> list[Goal]:
    mem = fig.get("memory") or {}
    ref_mem = (fig.get("reference") or {}).get("memory") or {}
    points = {p["pods"]: p["rss_mib"] for p in mem.get("points") or []}
    ref_points = {p["pods"]: p["rss_mib"] for p in ref_mem.get("points") or []}
    out = []
    for n in sorted(k for k in points if k > 0):
        ceiling, label = ref_points.get(n), f"reference {ref_points.get(n)} MiB"
        if ceiling is None and n == 10000:
            ceiling = RECORDED_REFERENCE["rss_10k_pods_mib"]
            label = f"reference {ceiling:g} MiB (recorded in issue 11)"
        out.append(
            Goal(
                6,
                f"RSS with {n:,} pods cached",
                _fmt(points[n], " MiB", 1),
                "< reference" if ceiling is None else f"< {ceiling:g} MiB",
                label if ceiling is not None else "no reference figure",
                None if ceiling is None else _check(points[n], lambda v, c=ceiling: v < c),
            )
        )
    cached = sorted(points)
    span = f"{cached[-2]:,} -> {cached[-1]:,}" if len(cached) >= 3 else "not measured"
    out.append(
        Goal(
            6,
            f"bytes per cached pod ({span})",
            _fmt(mem.get("bytes_per_cached_pod"), " B"),
            "reported",
            f"reference {_fmt(ref_mem.get('bytes_per_cached_pod'), ' B')}",
            None if mem.get("bytes_per_cached_pod") is None else True,
        )
    )
    idle, startup = mem.get("idle_rss_mib"), mem.get("startup_cpu_s")
    out.append(
        Goal(
            6,
            "idle RSS / start-up CPU",
            f"{_fmt(idle, ' MiB', 1)} / {_fmt(startup, ' s')}",
            f"< {IDLE_RSS_BEFORE_MIB:g} MiB / < {STARTUP_CPU_BEFORE_S:g} s",
            f"reference {_fmt(ref_mem.get('idle_rss_mib'), ' MiB', 1)} / "
            f"{_fmt(ref_mem.get('startup_cpu_s'), ' s')}",
            None
            if idle is None or startup is None
            else idle < IDLE_RSS_BEFORE_MIB and startup < STARTUP_CPU_BEFORE_S,
        )
    )
    return out
