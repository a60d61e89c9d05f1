"""``tfjob describe`` (and ``pytorchjob describe``): one job, its PodGroup when it is
gang-scheduled, its replicas, conditions and recent events, as text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tf_operator.apis.common.v1.run_policy import DEFAULTS_ANNOTATION, V1_9
from tf_operator.cli.output import table
from tf_operator.sdk.conditions import get_conditions, job_state
from tf_operator.sdk.kinds import TFJOB, JobKindInfo
from tf_operator.sdk.lifecycle import (
    blocking_reason,
    policy_in_force,
    restart_budget,
    restarts_by_cause,
)
from tf_operator.sdk.podgroup import PodGroupInfo
from tf_operator.sdk.replicas import replica_info
from tf_operator.sdk.runpolicy import queue_name, run_policy
from tf_operator.sdk.summary import age, manager, replica_counts, suspension

RECENT_EVENTS = 10


def describe(
    job: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    now: datetime | None = None,
    kind: JobKindInfo = TFJOB,
    group: PodGroupInfo | None = None,
) -> str:
    meta = job.get("metadata") or {}
    status = job.get("status") or {}
    spec = job.get("spec") or {}
    fields = [
        ("Name", meta.get("name")),
        ("Namespace", meta.get("namespace")),
        (
            "Created",
            f"{meta.get('creationTimestamp')} ({age(meta.get('creationTimestamp'), now)} ago)",
        ),
        ("State", job_state(job)),
        ("Replicas", replica_counts(job)),
        ("Suspend", suspension(job)),
        ("Managed by", manager(job)),
        *([("Queue", queue)] if (queue := queue_name(job)) else []),
        *([("PodGroup", str(group))] if group is not None else []),
        ("Clean pod policy", clean_pod_policy(job, spec)),
        *lifecycle_fields(job),
        ("Start time", status.get("startTime") or "-"),
        ("Completion time", status.get("completionTime") or "-"),
    ]
    width = max(len(k) for k, _ in fields) + 2
    out = [f"{(k + ':').ljust(width)}{v}" for k, v in fields]

    out += ["", "Replicas:"]
    rows = [
        [
            r.replica_type,
            r.index,
            r.pod,
            r.node or "-",
            r.phase,
            r.restarts,
            "-" if r.exit_code is None else r.exit_code,
            r.reason or "-",
        ]
        for r in (replica_info(pod, kind=kind) for pod in pods)
    ]
    headers = ["TYPE", "INDEX", "POD", "NODE", "PHASE", "RESTARTS", "EXIT CODE", "REASON"]
    out.append(_indent(table(headers, rows)) if rows else "  <none>")

    out += ["", "Conditions:"]
    conds = [
        [
            c.get("type", ""),
            c.get("status", ""),
            c.get("reason", ""),
            c.get("lastTransitionTime") or "-",
            c.get("message", ""),
        ]
        for c in get_conditions(job)
    ]
    headers = ["TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"]
    out.append(_indent(table(headers, conds)) if conds else "  <none>")

    out += ["", "Events:"]
    recent = [
        [
            e.get("type", ""),
            e.get("reason", ""),
            age(
                e.get("lastTimestamp")
                or e.get("eventTime")
                or e["metadata"].get("creationTimestamp"),
                now,
            ),
            e.get("count") or 1,
            e.get("message", ""),
        ]
        for e in events[-RECENT_EVENTS:]
    ]
    headers = ["TYPE", "REASON", "AGE", "COUNT", "MESSAGE"]
    out.append(_indent(table(headers, recent)) if recent else "  <none>")
    return "\n".join(out)


def lifecycle_fields(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The lifecycle policy in force, the restart budget used, restarts by cause and why the
    job is blocked (docs/policies.md); for a job without a policy, only why it is blocked, when
    it is by what no scheduler can satisfy (D156, D157)."""
    policy = policy_in_force(job)
    if policy is None:
        blocked = blocking_reason(job)
        return [("Blocked", blocked)] if blocked else []
    used, limit = restart_budget(job)
    causes = restarts_by_cause(job)
    return [
        ("Lifecycle policy", json.dumps(policy, sort_keys=True, separators=(",", ":"))),
        ("Restart budget", f"{used} of {'unlimited' if limit is None else limit} used"),
        ("Restarts by cause", ", ".join(f"{k}={v}" for k, v in sorted(causes.items())) or "-"),
        ("Blocked", blocking_reason(job) or "-"),
    ]


def clean_pod_policy(job: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """The policy as written (in ``runPolicy`` or on the spec), else the default the job's
    ``tf-operator.kubeflow.org/defaults`` annotation picks (D56)."""
    written = run_policy(job).get("cleanPodPolicy") or spec.get("cleanPodPolicy")
    if written:
        return str(written)
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    if annotations.get(DEFAULTS_ANNOTATION) == V1_9:
        return "None (v1.9 default)"
    return "Running (default; None when the operator runs with --defaults=v1.9)"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
