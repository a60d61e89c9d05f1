"""Where the operator's CPU goes: summarise a py-spy profile taken during a benchmark.

``hack/bench_operator.py --profile DIR`` runs our operator under ``py-spy record --gil``
(only samples of threads holding the GIL, i.e. running Python: CPU, not waiting) in raw
(collapsed stack) format. ``summarise`` reads such a file and attributes samples to the
areas below by their frames, inclusively (a sample counts in every area one of its frames
belongs to), and lists the hottest functions by self and inclusive samples.

Usage: ``python -m benchkit.profile FILE`` (from hack/), or through the benchmark.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# area -> substrings of a frame ("function (path)") that put a sample in the area
AREAS: dict[str, tuple[str, ...]] = {
    "HTTP request path (REST client, urllib3, http.client)": (
        "k8s/client/rest.py",
        "k8s/client/transport.py",
        "urllib3/",
        "http/client.py",
        "kubernetes/client/",
    ),
    "  proxy settings looked up per request": ("getproxies", "proxy_bypass", "_proxy"),
    "  auth settings built per request": ("auth_settings",),
    "Events (recorder, correlator, sending)": ("k8s/record/",),
    "logging (records, JSON formatting, handler I/O)": ("logging/", "pythonjsonlogger/"),
    "JSON encode / decode": (
        "json/encoder",
        "json/decoder",
        "json/__init__",
    ),
    "deep copies": ("copy.py",),
    "informers (reflector, delta FIFO, store, handlers)": ("k8s/cache/", "k8s/informers/"),
    "workqueue": ("k8s/workqueue/",),
    "sync logic (controller, reconcilers, status)": (
        "controller/v1/tensorflow/",
        "common/jobcontroller/",
        "control/",
    ),
    "Prometheus metrics": ("prometheus_client/",),
}

_LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")


Stacks = Counter[tuple[str, ...]]  # frames, outermost first -> samples


def read_stacks(path: Path) -> Stacks:
    """``Counter[tuple of frames, outermost first]`` from py-spy's raw output."""
    stacks: Stacks = Counter()
    for line in path.read_text(errors="replace").splitlines():
        match = _LINE.match(line.strip())
        if match:
            stacks[tuple(match["stack"].split(";"))] += int(match["count"])
    return stacks


def _name(frame: str) -> str:
    """``function (path)`` shortened to ``path:function``."""
    match = re.match(r"^(?P<fn>.*?) \((?P<file>[^)]*)\)$", frame)
    if not match:
        return frame
    return f"{match['file'].removesuffix('.py')}:{match['fn']}"


def summarise(stacks: Stacks, top: int = 20) -> dict[str, Any]:
    total = sum(stacks.values()) or 1
    areas: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for frames, count in stacks.items():
        joined = ";".join(frames)
        for area, needles in AREAS.items():
            if any(n in joined for n in needles):
                areas[area] += count
        own[_name(frames[-1])] += count
        for name in {_name(f) for f in frames[1:]}:  # frames[0] is the thread
            inclusive[name] += count

    def pct(n: int) -> float:
        return round(100 * n / total, 1)

    return {
        "samples": total,
        "areas_pct": {area: pct(areas[area]) for area in AREAS},
        "self_pct": [(name, pct(n)) for name, n in own.most_common(top)],
        "inclusive_pct": [(name, pct(n)) for name, n in inclusive.most_common(top * 2)],
    }


def print_summary(summary: dict[str, Any]) -> None:
    print(f"  {summary['samples']} GIL-holding samples")
    print("  by area (inclusive; areas overlap):")
    for area, pct in summary["areas_pct"].items():
        print(f"    {pct:5.1f}%  {area}")
    print("  hottest functions, self:")
    for name, pct in summary["self_pct"]:
        print(f"    {pct:5.1f}%  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    summary = summarise(read_stacks(args.file))
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
