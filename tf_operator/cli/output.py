"""Rendering TFJobs for a terminal: kubectl-style tables, ages and ``-o yaml|json``.

Pure functions from JSON dicts to text, shared by the ``tfjob`` command and its tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import yaml

from tf_operator.sdk.conditions import job_state, replica_statuses

OUTPUT_FORMATS = ("wide", "yaml", "json", "name")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def human_duration(seconds: float) -> str:
    """kubectl's short durations (``duration.HumanDuration``): 45s, 3m12s, 95m, 3h5m, 30h, 4d."""
    seconds = max(0, int(seconds))
    minutes, hours = seconds // 60, seconds // 3600
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    return f"{hours // 24}d"


def age(timestamp: str | None, now: datetime | None = None) -> str:
    when = parse_time(timestamp)
    if when is None:
        return "<unknown>"
    return human_duration(((now or datetime.now(UTC)) - when).total_seconds())


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by three spaces, as kubectl prints them."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def replica_counts(job: Mapping[str, Any]) -> str:
    """``PS=1,Worker=2`` from the spec (a missing ``replicas`` counts as 1)."""
    specs = (job.get("spec") or {}).get("tfReplicaSpecs") or {}
    parts = []
    for rtype, spec in specs.items():
        replicas = (spec or {}).get("replicas")
        parts.append(f"{rtype}={1 if replicas is None else replicas}")
    return ",".join(parts) or "<none>"


def duration(job: Mapping[str, Any], now: datetime | None = None) -> str:
    status = job.get("status") or {}
    start = parse_time(status.get("startTime"))
    if start is None:
        return ""
    end = parse_time(status.get("completionTime")) or now or datetime.now(UTC)
    return human_duration((end - start).total_seconds())


def job_rows(
    jobs: Sequence[Mapping[str, Any]], wide: bool, all_namespaces: bool, now: datetime | None = None
) -> tuple[list[str], list[list[str]]]:
    headers = ["NAME", "STATE", "AGE"]
    if wide:
        headers += ["REPLICAS", "ACTIVE", "SUCCEEDED", "FAILED", "DURATION"]
    if all_namespaces:
        headers.insert(0, "NAMESPACE")
    rows = []
    for job in jobs:
        meta = job.get("metadata") or {}
        row = [meta.get("name", ""), job_state(job), age(meta.get("creationTimestamp"), now)]
        if wide:
            counts = replica_statuses(job).values()
            row += [
                replica_counts(job),
                *(str(sum(c[k] for c in counts)) for k in ("active", "succeeded", "failed")),
                duration(job, now) or "-",
            ]
        if all_namespaces:
            row.insert(0, meta.get("namespace", ""))
        rows.append(row)
    return headers, rows


def render_jobs(
    jobs: Sequence[Mapping[str, Any]], output: str | None, all_namespaces: bool = False
) -> str:
    """``tfjob list`` output: a table (``wide`` adds columns), or the objects as YAML/JSON."""
    if output in ("yaml", "json"):
        return render_objects({"apiVersion": "v1", "kind": "List", "items": list(jobs)}, output)
    if output == "name":
        return "\n".join(f"tfjob.kubeflow.org/{j['metadata']['name']}" for j in jobs)
    if not jobs:
        return ""
    headers, rows = job_rows(jobs, output == "wide", all_namespaces)
    return table(headers, rows)


def render_objects(obj: Any, output: str) -> str:
    if output == "json":
        return json.dumps(obj, indent=4, sort_keys=False)
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False).rstrip("\n")
