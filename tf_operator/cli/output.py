"""Rendering TFJobs for a terminal: kubectl-style tables and ``-o yaml|json`` (ages, durations
and replica counts come from :mod:`tf_operator.sdk.summary`, which the dashboard shares).

Pure functions from JSON dicts to text, shared by the ``tfjob`` command and its tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import yaml

from tf_operator.sdk.conditions import job_state, replica_statuses
from tf_operator.sdk.lifecycle import blocking_reason, policy_in_force, restart_budget
from tf_operator.sdk.runpolicy import is_managed_elsewhere, managed_by
from tf_operator.sdk.summary import age, duration, replica_counts

OUTPUT_FORMATS = ("wide", "yaml", "json", "name")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by three spaces, as kubectl prints them."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def state(job: Mapping[str, Any]) -> str:
    """The job's state; for a job another controller manages (its ``managedBy``), that
    controller beside it: this operator creates nothing for such a job."""
    if is_managed_elsewhere(job):
        return f"{job_state(job)} (managed by {managed_by(job)})"
    return job_state(job)


def job_rows(
    jobs: Sequence[Mapping[str, Any]], wide: bool, all_namespaces: bool, now: datetime | None = None
) -> tuple[list[str], list[list[str]]]:
    headers = ["NAME", "STATE", "AGE"]
    if wide:
        headers += ["REPLICAS", "ACTIVE", "SUCCEEDED", "FAILED", "DURATION"]
    lifecycle = any(policy_in_force(j) is not None for j in jobs)
    blocked = any(blocking_reason(j) for j in jobs)
    if lifecycle:
        headers.append("RESTARTS")
    if lifecycle or blocked:
        headers.append("BLOCKED")
    if all_namespaces:
        headers.insert(0, "NAMESPACE")
    rows = []
    for job in jobs:
        meta = job.get("metadata") or {}
        row = [meta.get("name", ""), state(job), age(meta.get("creationTimestamp"), now)]
        if wide:
            counts = replica_statuses(job).values()
            row += [
                replica_counts(job),
                *(str(sum(c[k] for c in counts)) for k in ("active", "succeeded", "failed")),
                duration(job, now) or "-",
            ]
        if lifecycle:
            row.append(restarts_cell(job))
        if lifecycle or blocked:
            row.append(blocking_reason(job) or "-")
        if all_namespaces:
            row.insert(0, meta.get("namespace", ""))
        rows.append(row)
    return headers, rows


def restarts_cell(job: Mapping[str, Any]) -> str:
    """Restarts used of the budget (``used/limit``) for a job with a lifecycle policy
    (docs/policies.md); ``-`` for one without. Why a job is blocked is shown for every job."""
    if policy_in_force(job) is None:
        return "-"
    used, limit = restart_budget(job)
    return f"{used}/{'-' if limit is None else limit}"


def render_jobs(
    jobs: Sequence[Mapping[str, Any]],
    output: str | None,
    all_namespaces: bool = False,
    noun: str = "tfjob.kubeflow.org",
) -> str:
    """``tfjob list`` output: a table (``wide`` adds columns), or the objects as YAML/JSON."""
    if output in ("yaml", "json"):
        return render_objects({"apiVersion": "v1", "kind": "List", "items": list(jobs)}, output)
    if output == "name":
        return "\n".join(f"{noun}/{j['metadata']['name']}" for j in jobs)
    if not jobs:
        return ""
    headers, rows = job_rows(jobs, output == "wide", all_namespaces)
    return table(headers, rows)


def render_objects(obj: Any, output: str) -> str:
    if output == "json":
        return json.dumps(obj, indent=4, sort_keys=False)
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False).rstrip("\n")
