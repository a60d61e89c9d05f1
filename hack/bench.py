"""Run every benchmark script and write docs/benchmarks.md and docs/benchmarks.json.

Each ``hack/bench_*.py`` is a standalone script that prints human-readable figures and, as
its last line, ``BENCH_RESULT {json}``. This driver runs them one at a time (they would
otherwise compete for the two cores), gathers the JSON, and records the machine they ran on.

Usage: ``python hack/bench.py [--only NAME ...] [--output-dir docs]``.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ORDER = ["workqueue", "informer", "apiserver", "operator", "batchscheduler"]
MARKER = "BENCH_RESULT "
PER_SCRIPT_TIMEOUT_S = 420


def machine_facts() -> dict:
    facts = {
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


def discover(only: list[str]) -> list[tuple[str, Path]]:
    found = {p.stem.removeprefix("bench_"): p for p in HERE.glob("bench_*.py")}
    names = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    if only:
        names = [n for n in names if n in only]
    return [(n, found[n]) for n in names]


def run_one(name: str, script: Path) -> dict:
    print(f"== {name}: {script.relative_to(ROOT)}", flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    result: dict = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(MARKER):
            result = json.loads(line[len(MARKER) :])
        else:
            print("   " + line.rstrip(), flush=True)
    try:
        code = proc.wait(timeout=PER_SCRIPT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = -9
    elapsed = round(time.monotonic() - started, 1)
    return {"exit_code": code, "wall_seconds": elapsed, "figures": result}


def render_markdown(machine: dict, results: dict) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`hack/bench.py`). Every figure was measured on the local",
        "cluster of this project, on the machine below.",
        "",
        "| machine | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in machine.items()]
    for name, outcome in results.items():
        lines += ["", f"## {name}", ""]
        lines.append(f"exit code {outcome['exit_code']}, {outcome['wall_seconds']} s wall time")
        lines += ["", "| figure | value |", "|---|---|"]
        for key, value in _flatten(outcome["figures"]):
            lines.append(f"| {key} | {value} |")
    return "\n".join(lines) + "\n"


def _flatten(figures: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows += _flatten(value, name + ".")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, item in enumerate(value):
                label = item.get("jobs", i)
                rows += _flatten(item, f"{name}[{label}].")
        else:
            rows.append((name, value))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="benchmark names to run")
    parser.add_argument("--output-dir", default=str(ROOT / "docs"))
    args = parser.parse_args()
    scripts = discover(args.only)
    if not scripts:
        print("no benchmark scripts found", file=sys.stderr)
        return 1
    machine = machine_facts()
    results = {name: run_one(name, script) for name, script in scripts}
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmarks.json").write_text(
        json.dumps({"machine": machine, "results": results}, indent=2) + "\n"
    )
    (out / "benchmarks.md").write_text(render_markdown(machine, results))
    print(f"wrote {out / 'benchmarks.md'} and {out / 'benchmarks.json'}")
    return 0 if all(r["exit_code"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
