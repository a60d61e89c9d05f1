"""Kueue's kubeflow job integration, played: how Kueue queues, admits and evicts a kubeflow.org
job (TFJob, PyTorchJob) that names one of its queues.

The local cluster plays kube-batch and Volcano by their own loops; Kueue's decisions (which
flavour, when to preempt) are the caller's here, and :class:`Kueue` does to the job exactly
what Kueue does once it has decided. The facts, from kueue ``pkg/controller/jobs/kubeflow``
(``kubeflowjob``, ``jobs/tfjob``), ``pkg/podset`` and ``pkg/controller/jobframework``:

- Its webhook creates a job that names a LocalQueue (label ``kueue.x-k8s.io/queue-name``)
  suspended (``spec.runPolicy.suspend: true``): :func:`default_on_create`.
- Its Workload has one pod set per replica type the job has, in the kind's order (TFJob:
  Chief, Master, PS, Worker, Evaluator; PyTorchJob: Master, Worker), named by the type in lower
  case, counting ``replicas`` (1 when unset), with the template as it was when the Workload was
  made (once the job is inactive): :meth:`Kueue.workload`.
- Admitting (``RunWithPodSetsInfo``) sets ``suspend`` false and merges one :class:`PodSetInfo`
  into each pod set's template, in that order: labels (always ``kueue.x-k8s.io/podset: <pod
  set>``), annotations and node selector (the flavour's node labels) as maps where a key the
  template has with another value is a conflict that fails the admission, tolerations (the
  flavour's) appended unless an equal one is there: :meth:`Kueue.admit`.
- Evicting (``Suspend`` and ``RestorePodSetsInfo``) sets ``suspend`` true and sets every
  template's labels, annotations, node selector and tolerations back to the Workload's; Kueue
  then waits until the job is no longer active before it releases the quota:
  :meth:`Kueue.evict`.
- Every write is a JSON merge patch from the object as read to the object as changed that
  carries the resourceVersion read (``clientutil.Patch``, strict): a write in between makes it
  fail with 409 Conflict and Kueue's reconcile runs again from a fresh read.
- Kueue judges a job finished by a True Succeeded or Failed condition (success unless Failed),
  its pods ready by ``Running=True`` and the job active by any ``replicaStatuses[*].active``
  other than 0; it finds the job's pods by v1.9's job-name and operator-name labels.

Not played: topology-aware scheduling (its scheduling gates and annotations), elastic jobs,
MultiKueue, priorities. The job is read and written through :class:`Jobs`:
:class:`ClientJobs` here, any API client elsewhere.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from localcluster.apimachinery.errors import StatusError
from localcluster.client.api import ClusterClient

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PODSET_LABEL = "kueue.x-k8s.io/podset"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
# Reconciles of one admission or eviction that lost to a concurrent write before giving up.
CONFLICT_ATTEMPTS = 10

Obj = dict[str, Any]


@dataclass(frozen=True)
class KubeflowKind:
    """What Kueue's ``KFJobControl`` knows of one kubeflow.org kind."""

    kind: str
    plural: str
    replica_specs_field: str
    replica_order: tuple[str, ...]  # OrderedReplicaTypes
    operator_name: str  # the training.kubeflow.org/operator-name its pods carry
    group: str = "kubeflow.org"
    version: str = "v1"

    @property
    def gvr(self) -> tuple[str, str, str]:
        return self.group, self.version, self.plural


TFJOB = KubeflowKind(
    "TFJob", "tfjobs", "tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator"),
    "tfjob-controller",
)  # fmt: skip
PYTORCHJOB = KubeflowKind(
    "PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", ("Master", "Worker"),
    "pytorchjob-controller",
)  # fmt: skip


class Conflict(Exception):
    """The job changed since it was read (409): read it again and redo the change."""


class InvalidPodSetInfo(ValueError):
    """An admission that cannot be applied: wrong number of pod sets, or a conflicting key."""


class Jobs(Protocol):
    """Where the played Kueue reads and writes one kind's jobs."""

    def get(self, namespace: str, name: str) -> Obj: ...

    def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        """Apply a JSON merge patch; raise :class:`Conflict` on 409."""
        ...


class ClientJobs:
    """:class:`Jobs` over a ``ClusterClient``."""

    def __init__(self, client: ClusterClient, kind: KubeflowKind = TFJOB) -> None:
        self._client = client
        self._gvr = kind.gvr

    def get(self, namespace: str, name: str) -> Obj:
        return self._client.get(self._gvr, namespace, name)

    def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        try:
            return self._client.patch(self._gvr, namespace, name, patch, "merge")
        except StatusError as err:
            if err.code == 409:
                raise Conflict(str(err)) from err
            raise


@dataclass
class PodSetInfo:
    """What an admission puts on one pod set's template, or what the template had
    (kueue ``podset.PodSetInfo``, without topology's scheduling gates)."""

    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)

    @classmethod
    def of_template(cls, template: Mapping[str, Any]) -> PodSetInfo:
        meta, spec = template.get("metadata") or {}, template.get("spec") or {}
        return cls(
            dict(meta.get("labels") or {}),
            dict(meta.get("annotations") or {}),
            dict(spec.get("nodeSelector") or {}),
            copy.deepcopy(list(spec.get("tolerations") or [])),
        )

    def merged(self, other: PodSetInfo) -> PodSetInfo:
        """``PodSetInfo.Merge``: maps joined (a key with two values is a conflict),
        tolerations appended unless an equal one is there."""
        annotations = _joined(self.annotations, other.annotations, "annotations")
        labels = _joined(self.labels, other.labels, "labels")
        return PodSetInfo(
            labels,
            annotations,
            _joined(self.node_selector, other.node_selector, "nodeSelector"),
            self.tolerations
            + [
                copy.deepcopy(t)
                for t in other.tolerations
                if not any(same_toleration(t, mine) for mine in self.tolerations)
            ],
        )

    def write_to(self, template: Obj) -> None:
        """Set the template's four fields to these (an empty one is removed)."""
        meta, spec = template.setdefault("metadata", {}), template.setdefault("spec", {})
        for holder, key, value in (
            (meta, "labels", self.labels),
            (meta, "annotations", self.annotations),
            (spec, "nodeSelector", self.node_selector),
            (spec, "tolerations", self.tolerations),
        ):
            if value:
                holder[key] = copy.deepcopy(value)
            else:
                holder.pop(key, None)


def _joined(mine: dict[str, str], added: dict[str, str], what: str) -> dict[str, str]:
    for key, value in added.items():
        if key in mine and mine[key] != value:
            raise InvalidPodSetInfo(
                f"invalid admission check PodSetUpdate: conflict for {what}: "
                f"conflict for key={key}, value1={mine[key]}, value2={value}"
            )
    return {**mine, **added}


def same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Kueue's ``tolerations.Equal``: same key, effect, value and operator (unset meaning
    ``Equal``); ``tolerationSeconds`` does not count."""

    def identity(t: Mapping[str, Any]) -> tuple[Any, ...]:
        return t.get("key"), t.get("effect"), t.get("value"), t.get("operator") or "Equal"

    return identity(a) == identity(b)


@dataclass(frozen=True)
class PodSet:
    name: str  # the replica type in lower case
    replica_type: str
    count: int
    template: PodSetInfo  # the template's fields as the Workload holds them


@dataclass(frozen=True)
class Workload:
    """The part of Kueue's Workload for a job that admission and eviction use."""

    namespace: str
    job_name: str
    pod_sets: tuple[PodSet, ...]

    @property
    def pod_set_names(self) -> list[str]:
        return [p.name for p in self.pod_sets]


class Finished(NamedTuple):
    finished: bool
    success: bool
    message: str


def default_on_create(job: Obj) -> Obj:
    """Kueue's webhook on create: a job that names a LocalQueue starts suspended."""
    if ((job.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL):
        job.setdefault("spec", {}).setdefault("runPolicy", {})["suspend"] = True
    return job


def is_suspended(job: Mapping[str, Any]) -> bool:
    return bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))


def finished(job: Mapping[str, Any]) -> Finished:
    """``Finished``: a True Succeeded or Failed condition; success unless it is Failed."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True":
            return Finished(True, c["type"] != "Failed", c.get("message") or "")
    return Finished(False, True, "")


def pods_ready(job: Mapping[str, Any]) -> bool:
    """``PodsReady``: the job's Running condition is True."""
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Running" and c.get("status") == "True" for c in conditions)


def is_active(job: Mapping[str, Any]) -> bool:
    """``IsActive``: some replica type has active pods."""
    statuses = (job.get("status") or {}).get("replicaStatuses") or {}
    return any((s or {}).get("active", 0) != 0 for s in statuses.values())


def merge_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> Obj:
    """The JSON merge patch (RFC 7386) that turns ``before`` into ``after``: changed and new
    keys with their values (maps recursively, lists whole), removed keys as null."""
    patch: Obj = {key: None for key in before if key not in after}
    for key, value in after.items():
        old = before.get(key)
        if key in before and old == value:
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            patch[key] = merge_patch(old, value)
        else:
            patch[key] = copy.deepcopy(value)
    return patch


class Kueue:
    """Admits and evicts one kind's jobs as Kueue does, through ``jobs``."""

    def __init__(self, jobs: Jobs, kind: KubeflowKind = TFJOB) -> None:
        self.jobs = jobs
        self.kind = kind

    def pod_selector(self, name: str) -> str:
        """``PodLabelSelector``: how Kueue finds the job's pods."""
        return f"{JOB_NAME_LABEL}={name},{OPERATOR_NAME_LABEL}={self.kind.operator_name}"

    def replica_types(self, job: Mapping[str, Any]) -> list[str]:
        """``OrderedReplicaTypes``: the kind's order, the types the job has."""
        specs = job["spec"][self.kind.replica_specs_field]
        return [t for t in self.kind.replica_order if specs.get(t) is not None]

    def workload(self, namespace: str, name: str) -> Workload:
        """The Workload Kueue makes for the job as it is now."""
        job = self.jobs.get(namespace, name)
        if is_active(job):
            raise RuntimeError(f"{namespace}/{name} still has active pods: no Workload yet")
        specs = job["spec"][self.kind.replica_specs_field]
        pod_sets = tuple(
            PodSet(
                rtype.lower(),
                rtype,
                1 if specs[rtype].get("replicas") is None else int(specs[rtype]["replicas"]),
                PodSetInfo.of_template(specs[rtype].get("template") or {}),
            )
            for rtype in self.replica_types(job)
        )
        return Workload(namespace, name, pod_sets)

    def admit(self, workload: Workload, infos: Sequence[PodSetInfo]) -> Obj:
        """Start the job with one :class:`PodSetInfo` per pod set, in the Workload's order."""
        if len(infos) != len(workload.pod_sets):
            raise InvalidPodSetInfo(
                f"invalid podset infos: expecting {len(workload.pod_sets)} podset, got {len(infos)}"
            )

        def run(job: Obj) -> None:
            job["spec"].setdefault("runPolicy", {})["suspend"] = False
            specs = job["spec"][self.kind.replica_specs_field]
            types = self.replica_types(job)
            if len(types) != len(infos):
                raise InvalidPodSetInfo(f"the job has {len(types)} replica types now")
            for rtype, pod_set, info in zip(types, workload.pod_sets, infos, strict=True):
                added = copy.deepcopy(info)
                added.labels[PODSET_LABEL] = pod_set.name
                template = specs[rtype].setdefault("template", {})
                PodSetInfo.of_template(template).merged(added).write_to(template)

        return self._patch(workload, run)

    def evict(self, workload: Workload) -> Obj:
        """Suspend the job and give its templates back what the Workload holds."""

        def stop(job: Obj) -> None:
            job["spec"].setdefault("runPolicy", {})["suspend"] = True
            specs = job["spec"][self.kind.replica_specs_field]
            types = self.replica_types(job)
            if len(types) != len(workload.pod_sets):
                return  # Kueue skips the restore when the pod sets no longer match
            for rtype, pod_set in zip(types, workload.pod_sets, strict=True):
                pod_set.template.write_to(specs[rtype].setdefault("template", {}))

        return self._patch(workload, stop)

    def _patch(self, workload: Workload, change: Callable[[Obj], None]) -> Obj:
        for attempt in range(CONFLICT_ATTEMPTS):
            job = self.jobs.get(workload.namespace, workload.job_name)
            changed = copy.deepcopy(job)
            change(changed)
            patch = merge_patch(job, changed)
            if not patch:
                return job
            version = job["metadata"].get("resourceVersion")
            patch.setdefault("metadata", {})["resourceVersion"] = version
            try:
                return self.jobs.merge_patch(workload.namespace, workload.job_name, patch)
            except Conflict:
                if attempt == CONFLICT_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")
