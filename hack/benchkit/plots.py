"""The report's plots (matplotlib, Agg backend), written to docs/img/*.png.

Each function takes the operator benchmark's figures (and the recorded baseline) and writes
one small PNG, returning its file name, or None when the figures it needs are missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100
SIZE = (6.4, 3.6)


def _save(fig: Any, out: Path, name: str) -> str:
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / name, dpi=DPI)
    plt.close(fig)
    return name


def scaling(figures: dict[str, Any], out: Path) -> str | None:
    """Time to all pods + services against the number of jobs, operator and floor."""
    series = figures.get("scaling") or {}
    fig, ax = plt.subplots(figsize=SIZE)
    drawn = False
    for key, style in (("operator", "o-"), ("floor", "s--")):
        points = [p for p in series.get(key) or [] if p.get("all_pods_and_services_s")]
        if points:
            drawn = True
            ax.plot(
                [p["jobs"] for p in points],
                [p["all_pods_and_services_s"] for p in points],
                style,
                label=points[0].get("subject", key),
            )
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("TFJobs created in one burst (1 PS + 4 workers each)")
    ax.set_ylabel("seconds to all pods + services")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("Time to all pods + services vs burst size")
    return _save(fig, out, "scaling.png")


def latency(figures: dict[str, Any], out: Path) -> str | None:
    """Cumulative distribution of per-job time to all its pods + services in the burst."""
    runs = [
        figures.get("floor"),
        figures.get("floor_objects"),
        figures.get("operator_default"),
        figures.get("operator_t4"),
        ((figures.get("reference") or {}).get("burst")),
    ]
    fig, ax = plt.subplots(figsize=SIZE)
    drawn = False
    for run in runs:
        values = (run or {}).get("per_job_latencies_s") or []
        if run and values:
            drawn = True
            n = len(values)
            ax.step(values, [(i + 1) / n for i in range(n)], where="post",
                    label=f"{run['subject']} ({run['jobs']} jobs)")  # fmt: skip
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("seconds from job created to all its pods + services")
    ax.set_ylabel("fraction of jobs")
    ax.set_xscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("Per-job latency in the burst")
    return _save(fig, out, "burst_latency.png")


def memory(figures: dict[str, Any], out: Path) -> str | None:
    """RSS against pods in the informer cache, operator and reference."""
    fig, ax = plt.subplots(figsize=SIZE)
    drawn = False
    for run, style in (
        (figures.get("memory"), "o-"),
        (((figures.get("reference") or {}).get("memory")), "s--"),
    ):
        points = (run or {}).get("points") or []
        if run and points:
            drawn = True
            ax.plot([p["pods"] for p in points], [p["rss_mib"] for p in points], style,
                    label=run["subject"])  # fmt: skip
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("pods cached")
    ax.set_ylabel("RSS (MiB)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title("Operator memory vs cached pods")
    return _save(fig, out, "rss_vs_pods.png")


def cpu_per_job(figures: dict[str, Any], baseline: dict[str, Any], out: Path) -> str | None:
    """CPU per job lifecycle: before this work (recorded baseline) and now, beside the floor
    and the lean lifecycle client."""
    before = (baseline or {}).get("figures") or {}
    labels, befores, nows = [], [], []
    for key, label in (("operator_default", "defaults"), ("operator_t4", "--threadiness 4")):
        now = (figures.get(key) or {}).get("cpu_ms_per_job")
        then = (before.get(key) or {}).get("cpu_ms_per_job")
        if now is None and then is None:
            continue
        labels.append(label)
        befores.append(then or 0)
        nows.append(now or 0)
    if not labels:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], befores, 0.4, label=f"before ({baseline.get('commit', '?')})")
    ax.bar([x + 0.2 for x in xs], nows, 0.4, label="now")
    floor = (figures.get("floor") or {}).get("cpu_ms_per_job")
    if floor:
        ax.axhline(floor, color="grey", linestyle="--", label=f"floor client ({floor} ms)")
    lean = (figures.get("lean") or {}).get("cpu_ms_per_job")
    if lean:
        label = f"lean lifecycle client ({lean} ms)"
        ax.axhline(lean, color="green", linestyle="-.", label=label)
    ax.axhline(5.0, color="red", linestyle=":", label="goal (5 ms)")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("operator CPU ms per job lifecycle")
    ax.set_ylim(0, max([*befores, *nows, 5.0]) * 1.45)
    ax.legend(fontsize="small", loc="upper center", ncol=2)
    ax.set_title("CPU per job, before and after")
    return _save(fig, out, "cpu_per_job.png")


def steady_depth(figures: dict[str, Any], out: Path) -> str | None:
    series = (figures.get("steady") or {}).get("depth_series") or []
    if not series:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    ax.plot([t for t, _ in series], [d for _, d in series])
    ax.set_xlabel("seconds into the steady load")
    ax.set_ylabel("workqueue depth")
    ax.grid(True, alpha=0.3)
    ax.set_title("Workqueue depth under steady load")
    return _save(fig, out, "steady_depth.png")


def render_all(figures: dict[str, Any], baseline: dict[str, Any], out: Path) -> dict[str, str]:
    """Every plot that has figures; ``{plot: file name}``."""
    made = {
        "scaling": scaling(figures, out),
        "latency": latency(figures, out),
        "memory": memory(figures, out),
        "cpu": cpu_per_job(figures, baseline, out),
        "steady": steady_depth(figures, out),
    }
    return {k: v for k, v in made.items() if v}
