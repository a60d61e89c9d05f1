"""Run every benchmark script and write docs/benchmarks.md, docs/benchmarks.json and the
plots in docs/img/.

Each ``hack/bench_*.py`` is a door to one of :mod:`benchkit.suites`, run as a process of its
own that prints human-readable figures and, as its last line, ``BENCH_RESULT {json}``. This
driver runs them one at a time (they would otherwise compete for the two cores), gathers the
JSON, records the machine, commit and load, and renders the report (``report``, ``plots``).

``docs/benchmarks.json`` keeps a ``baseline``: the operator figures from before the
performance work, carried over from run to run so the report can show before and after;
``--record-baseline`` replaces it with this run's figures. It also keeps ``before_issue26``
(the key earlier runs wrote): the efficiency budgets as measured by the last run before that
work (recorded from the
``benchmarks.json`` found the first time this driver runs, then carried over).

Usage: ``python hack/bench.py [--quick] [--only NAME ...] [--output-dir docs]
[--record-baseline] [--render-only]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchkit import goals
from benchkit.paths import HACK, ROOT

ORDER = ["workqueue", "informer", "apiserver", "operator", "batchscheduler"]
MARKER = "BENCH_RESULT "
# the operator's figures kept as the baseline (small: no per-job latency lists)
BASELINE_KEYS = ("operator_default", "operator_t4", "floor", "memory")
BASELINE_DROP = ("per_job_latencies_s", "depth_series", "cluster_cpu_by_thread", "log_tail")


def machine_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    try:
        with open("/proc/meminfo") as meminfo:
            total_kb = int(meminfo.readline().split()[1])
        facts["memory_gib"] = round(total_kb / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    facts["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return facts


def commit(*paths: str) -> str:
    """``git describe`` of the work tree, or the last commit touching ``paths``."""
    argv = (
        ["git", "log", "-1", "--format=%h", "--", *paths]
        if paths
        else ["git", "describe", "--always", "--dirty"]
    )
    try:
        out = subprocess.run(
            argv,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def discover(only: list[str]) -> list[tuple[str, Path]]:
    found = {p.stem.removeprefix("bench_"): p for p in HACK.glob("bench_*.py")}
    names = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    if only:
        names = [n for n in names if n in only]
    return [(n, found[n]) for n in names]


def run_one(name: str, script: Path, extra: list[str]) -> dict[str, Any]:
    print(f"== {name}: {script.relative_to(ROOT)} {' '.join(extra)}", flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(script), *extra], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    result: dict[str, Any] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(MARKER):
            result = json.loads(line[len(MARKER) :])
        else:
            print("   " + line.rstrip(), flush=True)
    code = proc.wait()
    elapsed = round(time.monotonic() - started, 1)
    return {"exit_code": code, "wall_seconds": elapsed, "figures": result}


def baseline_from(figures: dict[str, Any], revision: str) -> dict[str, Any]:
    kept = {}
    for key in BASELINE_KEYS:
        run = figures.get(key)
        if isinstance(run, dict):
            kept[key] = {k: v for k, v in run.items() if k not in BASELINE_DROP}
    return {"commit": revision, "recorded": time.strftime("%Y-%m-%d"), "figures": kept}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="benchmark names to run")
    parser.add_argument("--quick", action="store_true", help="short operator benchmark")
    parser.add_argument("--output-dir", default=str(ROOT / "docs"))
    parser.add_argument(
        "--record-baseline",
        action="store_true",
        help="keep this run's operator figures as the baseline",
    )
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="write benchmarks.md and the plots again from the existing benchmarks.json",
    )
    args = parser.parse_args()
    out = Path(args.output_dir)
    if args.render_only:
        return render(json.loads((out / "benchmarks.json").read_text()), out)
    scripts = discover(args.only)
    if not scripts:
        print("no benchmark scripts found", file=sys.stderr)
        return 1
    previous: dict[str, Any] = {}
    if (out / "benchmarks.json").exists():
        previous = json.loads((out / "benchmarks.json").read_text())
    doc: dict[str, Any] = {
        "machine": machine_facts(),
        "commit": commit(),
        "operator_commit": commit("tf_operator", "cmd"),
        "written": time.strftime("%Y-%m-%d %H:%M"),
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "baseline": previous.get("baseline") or {},
        "before_issue26": before_efficiency_work(previous),
    }
    doc["results"] = {
        name: run_one(name, script, ["--quick"] if args.quick and name == "operator" else [])
        for name, script in scripts
    }
    doc["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    operator = operator_figures(doc)
    if args.record_baseline and operator:
        doc["baseline"] = baseline_from(operator, doc["operator_commit"])
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmarks.json").write_text(json.dumps(doc, indent=1) + "\n")
    render(doc, out)
    return 0 if all(r["exit_code"] == 0 for r in doc["results"].values()) else 1


def before_efficiency_work(previous: dict[str, Any]) -> dict[str, Any]:
    """The efficiency budgets as the run in ``previous`` measured them (the create-throughput
    budget as measured before that work), unless ``previous`` carries them already."""
    if previous.get("before_issue26"):
        return dict(previous["before_issue26"])
    figures = operator_figures(previous)
    if not figures:
        return {}
    measured = {g.key: g.measured for g in goals.evaluate_efficiency(figures)}
    measured["cluster"] = goals.CLUSTER_BEFORE_EFFICIENCY_WORK
    return {
        "commit": previous.get("commit"),
        "written": previous.get("written"),
        "load_at_start": previous.get("load_at_start"),
        "measured": measured,
    }


def operator_figures(doc: dict[str, Any]) -> dict[str, Any]:
    return (((doc.get("results") or {}).get("operator") or {}).get("figures") or {}).get(
        "figures"
    ) or {}


def render(doc: dict[str, Any], out: Path) -> int:
    """benchmarks.md and the plots from ``doc`` (what benchmarks.json holds)."""
    from benchkit import plots, report  # matplotlib: only when rendering

    figures = operator_figures(doc)
    if figures:
        # the budget rows judged again from the figures, so a report rendered from an older
        # run's JSON words them as this code does (same bounds, same verdicts)
        operator = doc["results"]["operator"]["figures"]
        operator["goals"] = [g.as_dict() for g in goals.evaluate(figures)]
        operator["goals26"] = [g.as_dict() for g in goals.evaluate_efficiency(figures)]
    plot_files = plots.render_all(operator_figures(doc), doc.get("baseline") or {}, out / "img")
    (out / "benchmarks.md").write_text(report.render(doc, plot_files))
    print(
        f"wrote {out / 'benchmarks.md'} and {len(plot_files)} plots from {out / 'benchmarks.json'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
