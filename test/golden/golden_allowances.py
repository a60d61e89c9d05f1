"""Named allowances: where our operator deliberately writes something other than v0.5.3.

Each allowance turns what v0.5.3 wrote (a fixture) into what we write instead, for one known
and deliberate divergence: a v0.5.3 defect the port fixes. A case opts in by listing the names
in its ``case.yaml``; nothing is allowed implicitly, and an allowance listed for a case where it
changes nothing is an error (it would hide nothing, or hide the wrong thing). The normaliser
(``golden_normalise``) only removes what the cluster or the run decides; differences between
the operators live here, in the open.

An allowance gets the case and one snapshot (``{"pods": [...], "services": [...], ...}``, plus
``tfjob_status`` in a final snapshot) and edits it in place.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from golden_normalise import JOB_UID_LABEL, TF_CONFIG, TFJOB_UID

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
GANG_SCHEDULER = "kube-batch"


@dataclass(frozen=True)
class Allowance:
    name: str
    v053: str  # what v0.5.3 did
    ours: str  # what we do instead, and why
    apply: Callable[[Any, dict], None]


def _replica_template(case: Any, pod: dict) -> dict:
    """The TFJob's pod template for this pod's replica type (label ``tf-replica-type``)."""
    rt = pod["metadata"]["labels"]["tf-replica-type"]
    for rtype, spec in case.tfjob["spec"]["tfReplicaSpecs"].items():
        if rtype.lower() == rt:
            return spec["template"]
    raise KeyError(f"no replica type {rt!r} in {case.name}")


def _tf_config_once(case: Any, snapshot: dict) -> None:
    for pod in snapshot["pods"]:
        for container in pod["spec"]["containers"]:
            env = container.get("env") or []
            positions = [i for i, e in enumerate(env) if e.get("name") == TF_CONFIG]
            if len(positions) > 1:
                first, last = positions[0], positions[-1]
                env[first] = env[last]
                container["env"] = [e for i, e in enumerate(env) if i not in positions[1:]]


def _gang_annotations(case: Any, snapshot: dict) -> None:
    for pod in snapshot["pods"]:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[GROUP_NAME_ANNOTATION] = case.job_name
        annotations[TASK_SPEC_ANNOTATION] = pod["metadata"]["labels"]["tf-replica-type"]


def _gang_scheduler_per_pod(case: Any, snapshot: dict) -> None:
    for pod in snapshot["pods"]:
        if not (_replica_template(case, pod).get("spec") or {}).get("schedulerName"):
            pod["spec"]["schedulerName"] = GANG_SCHEDULER


def _copy_missing(source: dict, target: dict) -> None:
    for key, value in source.items():
        target.setdefault(key, value)


def _template_fields_kept(case: Any, snapshot: dict) -> None:
    for pod in snapshot["pods"]:
        template_spec = _replica_template(case, pod).get("spec") or {}
        spec = pod["spec"]
        for key in ("containers", "initContainers"):
            by_name = {c["name"]: c for c in template_spec.get(key) or []}
            for container in spec.get(key) or []:
                _copy_missing(by_name.get(container["name"], {}), container)
        _copy_missing(template_spec, spec)


def _last_phases(case: Any) -> dict[str, str]:
    """The phase the steps last wrote for each replica (``all`` covers every replica)."""
    phases: dict[str, str] = {}
    replicas = [
        f"{rtype.lower()}-{i}"
        for rtype, spec in case.tfjob["spec"]["tfReplicaSpecs"].items()
        for i in range(int(spec.get("replicas", 1)))
    ]
    for step in case.steps:
        for replica, state in step.pods.items():
            phase = state if isinstance(state, str) else state["phase"]
            for name in replicas if replica == "all" else [replica]:
                phases[name] = phase
    return phases


def _limit_failure_deletes_active_pods(case: Any, snapshot: dict) -> None:
    if "tfjob_status" not in snapshot:
        return  # only the state after the steps
    phases = _last_phases(case)
    active = {
        f"{case.job_name}-{replica}"
        for replica, phase in phases.items()
        if phase in ("Pending", "Running")
    }
    for kind in ("pods", "services"):
        snapshot[kind] = [o for o in snapshot[kind] if o["metadata"]["name"] not in active]


_RETRYABLE_EXIT_CODES = (130, 137, 138, 143)


def _exit_code_restarts_in_status(case: Any, snapshot: dict) -> None:
    """One count per retryable failure the steps give a replica under restartPolicy ExitCode
    (the pods are gone, so no UID is left in ``countedPods``)."""
    if "tfjob_status" not in snapshot:
        return  # only the state after the steps
    policies = {
        rtype.lower(): spec.get("restartPolicy")
        for rtype, spec in case.tfjob["spec"]["tfReplicaSpecs"].items()
    }
    count = 0
    for step in case.steps:
        for replica, state in step.pods.items():
            exit_code = state.get("exitCode") if isinstance(state, dict) else None
            rtype = replica.rsplit("-", 1)[0]
            if exit_code in _RETRYABLE_EXIT_CODES and policies.get(rtype) == "ExitCode":
                count += 1
    if count:
        snapshot["tfjob_status"]["exitCodeRestarts"] = {"count": count}


_LIMIT_REASONS = {
    "has reached the specified backoff limit": "BackoffLimitExceeded",
    "was active longer than specified deadline": "DeadlineExceeded",
}


def _limit_failure_reasons(case: Any, snapshot: dict) -> None:
    """A limit failure's Failed condition carries batch/v1 Job's reason (message unchanged)."""
    if "tfjob_status" not in snapshot:
        return  # only the state after the steps
    for condition in snapshot["tfjob_status"].get("conditions") or []:
        if condition.get("type") != "Failed" or condition.get("reason") != "TFJobFailed":
            continue
        for ending, reason in _LIMIT_REASONS.items():
            if condition.get("message", "").endswith(ending):
                condition["reason"] = reason


def _last_valid_spec_in_status(case: Any, snapshot: dict) -> None:
    """A running job's status carries the digest of its spec's compact JSON (D39, D153)."""
    status = snapshot.get("tfjob_status")
    if status is None:
        return  # only the state after the steps
    finished = any(
        c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    if not finished:
        # the spec as stored: the CRD defaults runPolicy to {}, then suspend to false (D90)
        spec = dict(case.tfjob["spec"])
        spec["runPolicy"] = {"suspend": False, **(spec.get("runPolicy") or {})}
        text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        status["lastValidSpecDigest"] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _active_counts_created_pods(case: Any, snapshot: dict) -> None:
    """Active counts every pod of a type that has not finished (D151): its pods in the
    snapshot less those the status counts succeeded or failed."""
    status = snapshot.get("tfjob_status")
    if status is None:
        return
    for rtype, counts in (status.get("replicaStatuses") or {}).items():
        pods = sum(
            1
            for p in snapshot["pods"]
            if p["metadata"]["labels"].get("tf-replica-type") == rtype.lower()
        )
        active = pods - counts.get("succeeded", 0) - counts.get("failed", 0)
        if active > counts.get("active", 0):
            counts["active"] = active


_TRAINING = "training.kubeflow.org/"


def _training_operator_labels(case: Any, snapshot: dict) -> None:
    """training-operator v1.9's labels, from the v0.5.3 labels beside them."""
    for kind in ("pods", "services"):
        for obj in snapshot[kind]:
            labels = obj["metadata"]["labels"]
            labels[_TRAINING + "operator-name"] = "tfjob-controller"
            labels[_TRAINING + "job-name"] = labels["tf-job-name"]
            labels[_TRAINING + "replica-type"] = labels["tf-replica-type"]
            labels[_TRAINING + "replica-index"] = labels["tf-replica-index"]
            if "tf-job-role" in labels:
                labels[_TRAINING + "job-role"] = labels["tf-job-role"]
            if kind == "pods":  # the creating job's uid (D154), a marker after normalising
                labels[JOB_UID_LABEL] = TFJOB_UID


ALLOWANCES = {
    a.name: a
    for a in (
        Allowance(
            "tf_config_defined_once",
            v053="appended its TF_CONFIG to a container that already defined one: two entries",
            ours="replaces the user's entry in place, so TF_CONFIG is defined exactly once "
            "and means what the operator computed",
            apply=_tf_config_once,
        ),
        Allowance(
            "gang_pod_annotations",
            v053="created the PodGroup but never linked pods to it: without the "
            "scheduling.k8s.io/group-name annotation kube-batch gives each pod its own group "
            "of one, so there is no gang",
            ours="annotates every pod with its group (the job name) and its task "
            "(volcano.sh/task-spec: the replica type)",
            apply=_gang_annotations,
        ),
        Allowance(
            "gang_scheduler_per_pod",
            v053="left every pod of the job to the default scheduler as soon as one replica "
            "template named another scheduler",
            ours="decides per pod: only pods whose template names a scheduler keep it",
            apply=_gang_scheduler_per_pod,
        ),
        Allowance(
            "template_fields_kept",
            v053="decoded pod templates into Kubernetes 1.11 types and silently dropped every "
            "field newer than that",
            ours="copies the template as written: nothing a user wrote is pruned",
            apply=_template_fields_kept,
        ),
        Allowance(
            "limit_failure_deletes_active_pods",
            v053="applied cleanPodPolicy to a job failed by its backoff limit or deadline: "
            "under None (or Running, for pending pods) its pods kept running after the failure",
            ours="deletes every active pod, and its service, of a job failed by a limit: the "
            "limit exists to stop the job",
            apply=_limit_failure_deletes_active_pods,
        ),
        Allowance(
            "exit_code_restarts_in_status",
            v053="kept no count of the pods it recreated under restartPolicy ExitCode, so "
            "backoffLimit never stopped a job whose pods kept exiting 137",
            ours="counts each recreation in status.exitCodeRestarts before deleting the failed "
            "pod, so the count backoffLimit is checked against survives operator restarts "
            "(divergence D11 in docs/divergences.md)",
            apply=_exit_code_restarts_in_status,
        ),
        Allowance(
            "limit_failure_reasons",
            v053="failed a job on its backoff limit or deadline with reason TFJobFailed, the "
            "reason of a replica failure",
            ours="uses batch/v1 Job's reasons BackoffLimitExceeded and DeadlineExceeded (same "
            "messages), so users and tools tell a limit failure from a replica failure "
            "(divergence D36 in docs/divergences.md)",
            apply=_limit_failure_reasons,
        ),
        Allowance(
            "training_operator_labels",
            v053="labelled pods and services with group-name, tf-job-name, tf-replica-type, "
            "tf-replica-index (and tf-job-role on the master) only",
            ours="also writes training-operator v1.9's training.kubeflow.org/operator-name, "
            "job-name, replica-type, replica-index and job-role, which Kueue and the Kubeflow "
            "SDKs select on; v0.5.3's labels stay, and stay the selector (D63); and on pods "
            "training.kubeflow.org/job-uid, the creating job's uid, which tells an earlier "
            "job's pod apart whatever its creation time (D154)",
            apply=_training_operator_labels,
        ),
        Allowance(
            "active_counts_created_pods",
            v053="counted only Running pods as active: a recreated pod still Pending was "
            "no replica of the job at all in its status",
            ours="counts every created pod that has not finished as active, as batch/v1 Job "
            "does, so Kueue does not read a job whose pods are being created as inactive "
            "(divergence D151 in docs/divergences.md)",
            apply=_active_counts_created_pods,
        ),
        Allowance(
            "last_valid_spec_in_status",
            v053="kept no copy of the spec a job ran on: an invalid edit of a running job "
            "failed it, and the fix ran it again from scratch",
            ours="keeps the digest of the spec a running job is reconciled on in "
            "status.lastValidSpecDigest (dropped once it finishes) and ignores an invalid edit, "
            "running on that spec (divergences D39 and D153 in docs/divergences.md)",
            apply=_last_valid_spec_in_status,
        ),
    )
}
