"""Kueue's kubeflow job integration, played by a test against the real operator.

What Kueue does to a TFJob (kueue ``pkg/controller/jobs/kubeflow/kubeflowjob`` and
``pkg/podset``), as facts: a job is created suspended (``runPolicy.suspend: true``); to admit it
Kueue sets ``suspend`` false and merges the admission's labels, annotations, node selector and
tolerations into each replica's pod template, replica types taken in the order Chief, Master,
PS, Worker, Evaluator (a key the template already has with another value is a conflict); to
evict it Kueue sets ``suspend`` back to true and restores every template's labels,
annotations, node selector and tolerations to what they were before the admission. It judges
the job finished by a True Succeeded or Failed condition, its pods ready by ``Running=True``,
and the job active by any ``replicaStatuses[*].active`` other than 0.

Kueue writes the whole object (an update, retried on a conflict); so does :class:`Admitter`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TFJOBS = ("kubeflow.org", "v1", "tfjobs")
# kueue's TFJob OrderedReplicaTypes
REPLICA_ORDER = ("Chief", "Master", "PS", "Worker", "Evaluator")
CONFLICT_ATTEMPTS = 10


@dataclass
class PodSetInfo:
    """What an admission adds to one replica type's pod template (kueue podset.PodSetInfo)."""

    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)


def _template_info(template: dict[str, Any]) -> PodSetInfo:
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    return PodSetInfo(
        dict(meta.get("labels") or {}),
        dict(meta.get("annotations") or {}),
        dict(spec.get("nodeSelector") or {}),
        copy.deepcopy(spec.get("tolerations") or []),
    )


def _set_info(template: dict[str, Any], info: PodSetInfo) -> None:
    meta, spec = template.setdefault("metadata", {}), template.setdefault("spec", {})
    for holder, key, value in (
        (meta, "labels", info.labels),
        (meta, "annotations", info.annotations),
        (spec, "nodeSelector", info.node_selector),
        (spec, "tolerations", info.tolerations),
    ):
        if value:
            holder[key] = copy.deepcopy(value)
        else:
            holder.pop(key, None)


def _merged(current: dict[str, str], added: dict[str, str], what: str) -> dict[str, str]:
    for key, value in added.items():
        if key in current and current[key] != value:
            raise ValueError(f"conflict for {what} {key}: {current[key]!r} != {value!r}")
    return {**current, **added}


class Admitter:
    """Admits and evicts TFJobs as Kueue does; remembers each job's templates as they were."""

    def __init__(self, registry: Any, namespace: str = "default") -> None:
        self._registry = registry
        self._namespace = namespace
        self._before: dict[str, dict[str, PodSetInfo]] = {}

    def replica_types(self, job: Mapping[str, Any]) -> list[str]:
        specs = job["spec"]["tfReplicaSpecs"]
        return [t for t in REPLICA_ORDER if specs.get(t) is not None]

    def admit(self, name: str, infos: Mapping[str, PodSetInfo]) -> dict[str, Any]:
        """RunWithPodSetsInfo: ``suspend: false``, each replica type's info merged in."""

        def edit(job: dict[str, Any]) -> None:
            specs = job["spec"]["tfReplicaSpecs"]
            types = self.replica_types(job)
            assert set(infos) == set(types), f"one PodSetInfo per replica type: {types}"
            self._before.setdefault(name, {t: _template_info(specs[t]["template"]) for t in types})
            job["spec"].setdefault("runPolicy", {})["suspend"] = False
            for rtype in types:
                template, added = specs[rtype]["template"], infos[rtype]
                now = _template_info(template)
                _set_info(
                    template,
                    PodSetInfo(
                        _merged(now.labels, added.labels, "label"),
                        _merged(now.annotations, added.annotations, "annotation"),
                        _merged(now.node_selector, added.node_selector, "node selector"),
                        now.tolerations
                        + [t for t in added.tolerations if t not in now.tolerations],
                    ),
                )

        return self._update(name, edit)

    def evict(self, name: str) -> dict[str, Any]:
        """Suspend, then RestorePodSetsInfo: the templates as they were before admission."""
        before = self._before.pop(name)

        def edit(job: dict[str, Any]) -> None:
            job["spec"].setdefault("runPolicy", {})["suspend"] = True
            for rtype, info in before.items():
                _set_info(job["spec"]["tfReplicaSpecs"][rtype]["template"], info)

        return self._update(name, edit)

    def _update(self, name: str, edit: Any) -> dict[str, Any]:
        from localcluster.apiserver import StatusError

        for attempt in range(CONFLICT_ATTEMPTS):
            job = self._registry.get(TFJOBS, self._namespace, name)
            edit(job)
            try:
                return dict(self._registry.update(TFJOBS, self._namespace, name, job))
            except StatusError as err:
                if err.code != 409 or attempt == CONFLICT_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    # ---- what Kueue reads ----------------------------------------------------------------

    def job(self, name: str) -> dict[str, Any]:
        return dict(self._registry.get(TFJOBS, self._namespace, name))

    def finished(self, name: str) -> tuple[bool, bool]:
        """(finished, success) as Kueue's Finished reads them."""
        for c in (self.job(name).get("status") or {}).get("conditions") or []:
            if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
                return True, c["type"] == "Succeeded"
        return False, False

    def pods_ready(self, name: str) -> bool:
        conditions = (self.job(name).get("status") or {}).get("conditions") or []
        return any(c["type"] == "Running" and c["status"] == "True" for c in conditions)

    def is_active(self, name: str) -> bool:
        statuses = (self.job(name).get("status") or {}).get("replicaStatuses") or {}
        return any((s or {}).get("active", 0) != 0 for s in statuses.values())
