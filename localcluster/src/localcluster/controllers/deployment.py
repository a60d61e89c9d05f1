"""The Deployment controller: ReplicaSets per pod template, rolled out by strategy.

Per sync, as kube-controller-manager's: claim the ReplicaSets the selector matches
(``ownership``); find the "new" set, whose template equals the Deployment's ignoring
``pod-template-hash`` (the oldest such), and give it the next revision; then

- ``RollingUpdate``: create the new set (named ``<deployment>-<hash>``) if missing, scale it up
  within ``maxSurge``, scale old sets down keeping ``replicas - maxUnavailable`` available,
  one step per sync (ReplicaSet status changes bring the next sync);
- ``Recreate``: scale every old set to zero, wait until their pods are gone, then create and
  scale up the new set;
- paused: only keep the new set at the right size; no rollout.

Once complete, old sets beyond ``revisionHistoryLimit`` that have no replicas are deleted.
Status (``deploymentutil``): counts summed over the sets, the ``Available`` condition and the
``Progressing`` condition (``NewReplicaSetCreated`` / ``FoundNewReplicaSet`` /
``ReplicaSetUpdated`` / ``NewReplicaSetAvailable``, or ``ProgressDeadlineExceeded`` after
``progressDeadlineSeconds`` without progress), which ``kubectl rollout status`` reads. Scaling
is recorded as ``ScalingReplicaSet`` events on the Deployment. Reads go to the API server (see
``replicaset``).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.events import record_event
from localcluster.client.informer import PODS, Informer, object_key, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker
from localcluster.controllers import deploymentutil as du
from localcluster.controllers import ownership
from localcluster.controllers.replicaset import REPLICA_SETS, is_active

logger = logging.getLogger(__name__)

DEPLOYMENTS = ("apps", "v1", "deployments")
COMPONENT = "deployment-controller"


class DeploymentController:
    def __init__(self, client: ClusterClient, clock: Callable[[], float] = time.time) -> None:
        self._client = client
        self._clock = clock
        self._queue = KeyQueue()
        self._deployments = Informer(client, DEPLOYMENTS, self._on_deployment)
        self._sets = Informer(client, REPLICA_SETS, self._on_set)
        self._pods = Informer(client, PODS, self._on_pod)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._deployments, self._sets, self._pods), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, COMPONENT))
        return threads

    # -- event handlers ---------------------------------------------------------------

    def _on_deployment(
        self, _event: str, deployment: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        self._queue.add(object_key(deployment))

    def _on_set(self, _event: str, rs: dict[str, Any], old: dict[str, Any] | None) -> None:
        keys = ownership.controller_keys("Deployment", rs, old)
        if not keys:  # an orphan: a deployment may adopt it
            namespace = rs["metadata"].get("namespace", "")
            keys = {
                object_key(d)
                for d in ownership.selecting(self._deployments.in_namespace(namespace), rs)
            }
        for key in keys:
            self._queue.add(key)

    def _on_pod(self, event: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        # only Recreate waits on pods: it may go on once the old pods are gone
        if event != "DELETED" and is_active(pod):
            return
        ref = ownership.controller_ref(pod)
        namespace = pod["metadata"].get("namespace", "")
        rs = (
            self._sets.get(f"{namespace}/{ref['name']}")
            if ref and ref.get("kind") == "ReplicaSet"
            else None
        )
        owner = ownership.controller_ref(rs) if rs is not None else None
        if owner is not None and owner.get("kind") == "Deployment":
            self._queue.add(f"{namespace}/{owner['name']}")

    # -- sync -------------------------------------------------------------------------

    def sync(self, key: str) -> float | None:
        namespace, name = key.split("/", 1)
        try:
            deployment = self._client.get(DEPLOYMENTS, namespace, name)
        except Exception:  # noqa: BLE001 - gone: its sets are the garbage collector's
            return None
        if deployment["metadata"].get("deletionTimestamp"):
            return None
        selector = (deployment.get("spec") or {}).get("selector") or {}
        candidates = self._client.list(REPLICA_SETS, namespace).items
        sets = ownership.claim(self._client, REPLICA_SETS, deployment, selector, candidates)
        spec = deployment.get("spec") or {}
        if spec.get("paused"):
            return self._sync_paused(deployment, sets)
        if not du.is_rolling(deployment):
            return self._recreate(deployment, sets)
        return self._rolling(deployment, sets)

    def _rolling(self, deployment: dict[str, Any], sets: list[dict[str, Any]]) -> float | None:
        new_rs, old_sets = self._new_and_old(deployment, sets)
        all_sets = [*old_sets, new_rs]
        wanted = du.new_rs_replicas(deployment, all_sets, new_rs)
        if du.replicas(new_rs) > du.replicas(deployment):
            wanted = du.replicas(deployment)
        if wanted != du.replicas(new_rs):
            new_rs = self._scale(deployment, new_rs, wanted)
            return self._sync_status(deployment, [*old_sets, new_rs], new_rs)
        downs = du.old_rs_scale_downs(deployment, all_sets, old_sets, new_rs)
        if downs:
            old_sets = [
                self._scale(deployment, rs, downs[rs["metadata"]["name"]])
                if rs["metadata"]["name"] in downs
                else rs
                for rs in old_sets
            ]
            return self._sync_status(deployment, [*old_sets, new_rs], new_rs)
        return self._finish(deployment, old_sets, new_rs)

    def _recreate(self, deployment: dict[str, Any], sets: list[dict[str, Any]]) -> float | None:
        new_rs, old_sets = self._existing_new_set(deployment, sets)
        active_old = [rs for rs in old_sets if du.replicas(rs) > 0]
        if active_old:
            old_sets = [
                self._scale(deployment, rs, 0) if du.replicas(rs) > 0 else rs for rs in old_sets
            ]
            return self._sync_status(deployment, [*old_sets, *([new_rs] if new_rs else [])], new_rs)
        if self._old_pods_running(deployment, old_sets):
            return self._sync_status(deployment, [*old_sets, *([new_rs] if new_rs else [])], new_rs)
        if new_rs is None:
            new_rs, old_sets = self._new_and_old(deployment, sets)
        if du.replicas(new_rs) != du.replicas(deployment):
            new_rs = self._scale(deployment, new_rs, du.replicas(deployment))
        return self._finish(deployment, old_sets, new_rs)

    def _sync_paused(self, deployment: dict[str, Any], sets: list[dict[str, Any]]) -> float | None:
        new_rs, old_sets = self._existing_new_set(deployment, sets)
        active_old = [rs for rs in old_sets if du.replicas(rs) > 0]
        if new_rs is not None and not active_old and du.replicas(new_rs) != du.replicas(deployment):
            new_rs = self._scale(deployment, new_rs, du.replicas(deployment))
        all_sets = [*old_sets, *([new_rs] if new_rs else [])]
        status = du.calculate_status(deployment, all_sets, new_rs, self._clock())
        progress = du.condition(status, "Progressing")
        if progress is not None and progress.get("reason") != du.PAUSED:
            du.set_condition(
                status, "Progressing", "Unknown", du.PAUSED, "Deployment is paused", self._clock()
            )
        self._write_status(deployment, status)
        return None

    def _finish(
        self, deployment: dict[str, Any], old_sets: list[dict[str, Any]], new_rs: dict[str, Any]
    ) -> float | None:
        all_sets = [*old_sets, new_rs]
        status = du.calculate_status(deployment, all_sets, new_rs, self._clock())
        if du.complete(deployment, status):
            self._cleanup(deployment, old_sets)
        return self._sync_status(deployment, all_sets, new_rs)

    # -- replica sets -----------------------------------------------------------------

    def _existing_new_set(
        self, deployment: dict[str, Any], sets: list[dict[str, Any]]
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """(the new set if it exists, with its revision synced; the old sets)."""
        template = (deployment.get("spec") or {}).get("template") or {}
        matching = sorted(
            (
                rs
                for rs in sets
                if du.equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template)
            ),
            key=du.creation_order,
        )
        new_rs = matching[0] if matching else None
        old_sets = [rs for rs in sets if rs is not new_rs]
        if new_rs is None:
            return None, old_sets
        next_revision = self._next_revision(old_sets)
        if du.revision(new_rs) < next_revision or self._annotations_stale(deployment, new_rs):
            new_rs = self._annotate(deployment, new_rs, max(du.revision(new_rs), next_revision))
            self._progress(
                deployment,
                du.FOUND_NEW_RS,
                f'Found new replica set "{new_rs["metadata"]["name"]}"',
                only_if_missing=True,
            )
        self._set_revision(deployment, du.revision(new_rs))
        return new_rs, old_sets

    def _new_and_old(
        self, deployment: dict[str, Any], sets: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the new set, created when missing; the old sets)."""
        new_rs, old_sets = self._existing_new_set(deployment, sets)
        if new_rs is None:
            new_rs = self._create_new_set(deployment, old_sets, self._next_revision(old_sets))
            self._set_revision(deployment, du.revision(new_rs))
        return new_rs, old_sets

    @staticmethod
    def _next_revision(old_sets: list[dict[str, Any]]) -> int:
        return max((du.revision(rs) for rs in old_sets), default=0) + 1

    def _replica_annotations(self, deployment: dict[str, Any]) -> dict[str, str]:
        desired = du.replicas(deployment)
        return {
            du.DESIRED_REPLICAS: str(desired),
            du.MAX_REPLICAS: str(desired + du.max_surge(deployment)),
        }

    def _annotations_stale(self, deployment: dict[str, Any], rs: dict[str, Any]) -> bool:
        annotations = rs["metadata"].get("annotations") or {}
        return any(
            annotations.get(k) != v for k, v in self._replica_annotations(deployment).items()
        )

    def _annotate(
        self, deployment: dict[str, Any], rs: dict[str, Any], revision: int
    ) -> dict[str, Any]:
        rs = copy.deepcopy(rs)
        annotations = rs["metadata"].setdefault("annotations", {})
        annotations[du.REVISION] = str(revision)
        annotations.update(self._replica_annotations(deployment))
        return self._client.update(
            REPLICA_SETS, rs["metadata"]["namespace"], rs["metadata"]["name"], rs
        )

    def _create_new_set(
        self, deployment: dict[str, Any], old_sets: list[dict[str, Any]], revision: int
    ) -> dict[str, Any]:
        spec = deployment.get("spec") or {}
        meta = deployment["metadata"]
        collisions = int((deployment.get("status") or {}).get("collisionCount") or 0)
        template = copy.deepcopy(spec.get("template") or {})
        pod_hash = du.template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[du.HASH_LABEL] = pod_hash
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[du.HASH_LABEL] = pod_hash
        name = f"{meta['name']}-{pod_hash}"
        draft = {"spec": {"replicas": 0}}
        replicas = du.new_rs_replicas(deployment, old_sets, draft)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": dict(template["metadata"]["labels"]),
                "annotations": {
                    du.REVISION: str(revision),
                    **self._replica_annotations(deployment),
                },
                "ownerReferences": [ownership.owner_reference(deployment)],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            created = self._client.create(REPLICA_SETS, meta["namespace"], rs)
        except Exception as err:  # noqa: BLE001
            if getattr(err, "code", None) != 409:
                raise
            existing = self._client.get(REPLICA_SETS, meta["namespace"], name)
            ours = (ownership.controller_ref(existing) or {}).get("uid") == meta["uid"]
            if ours and du.equal_ignore_hash(
                existing["spec"]["template"], spec.get("template") or {}
            ):
                return existing
            self._bump_collisions(deployment, collisions + 1)  # a hash collision: retry renamed
            raise
        if replicas > 0:
            record_event(
                self._client,
                deployment,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {name} to {replicas}",
                COMPONENT,
            )
        self._progress(deployment, du.NEW_RS_CREATED, f'Created new replica set "{name}"')
        return created

    def _bump_collisions(self, deployment: dict[str, Any], count: int) -> None:
        self._write_status(
            deployment, {**(deployment.get("status") or {}), "collisionCount": count}
        )

    def _scale(self, deployment: dict[str, Any], rs: dict[str, Any], count: int) -> dict[str, Any]:
        before = du.replicas(rs)
        if before == count and not self._annotations_stale(deployment, rs):
            return rs
        rs = copy.deepcopy(rs)
        rs["spec"]["replicas"] = count
        rs["metadata"].setdefault("annotations", {}).update(self._replica_annotations(deployment))
        updated = self._client.update(
            REPLICA_SETS, rs["metadata"]["namespace"], rs["metadata"]["name"], rs
        )
        if before != count:
            direction = "up" if count > before else "down"
            message = (
                f"Scaled {direction} replica set {rs['metadata']['name']} to {count} from {before}"
            )
            record_event(
                self._client, deployment, "Normal", "ScalingReplicaSet", message, COMPONENT
            )
        return updated

    def _old_pods_running(self, deployment: dict[str, Any], old_sets: list[dict[str, Any]]) -> bool:
        uids = {rs["metadata"]["uid"] for rs in old_sets}
        pods = self._client.list(PODS, deployment["metadata"]["namespace"]).items
        return any(
            (ownership.controller_ref(p) or {}).get("uid") in uids
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            for p in pods
        )

    def _cleanup(self, deployment: dict[str, Any], old_sets: list[dict[str, Any]]) -> None:
        limit = (deployment.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        idle = [
            rs
            for rs in old_sets
            if du.replicas(rs) == 0
            and du.status_count(rs, "replicas") == 0
            and not rs["metadata"].get("deletionTimestamp")
        ]
        idle.sort(key=lambda rs: (du.revision(rs), du.creation_order(rs)))
        for rs in idle[: max(len(idle) - int(limit), 0)]:
            try:
                self._client.delete(
                    REPLICA_SETS, rs["metadata"]["namespace"], rs["metadata"]["name"]
                )
            except Exception as err:  # noqa: BLE001 - already gone
                logger.debug("cleanup of %s: %s", rs["metadata"]["name"], err)

    # -- deployment metadata and status ----------------------------------------------

    def _set_revision(self, deployment: dict[str, Any], revision: int) -> None:
        annotations = deployment["metadata"].get("annotations") or {}
        if annotations.get(du.REVISION) == str(revision):
            return
        current = self._client.get(
            DEPLOYMENTS, deployment["metadata"]["namespace"], deployment["metadata"]["name"]
        )
        current["metadata"].setdefault("annotations", {})[du.REVISION] = str(revision)
        updated = self._client.update(
            DEPLOYMENTS, current["metadata"]["namespace"], current["metadata"]["name"], current
        )
        deployment["metadata"] = updated["metadata"]

    def _progress(
        self, deployment: dict[str, Any], reason: str, message: str, only_if_missing: bool = False
    ) -> None:
        """Record the Progressing condition on ``deployment`` (written with the next status)."""
        status = deployment.setdefault("status", {})
        if only_if_missing and du.condition(status, "Progressing") is not None:
            return
        du.set_condition(status, "Progressing", "True", reason, message, self._clock())

    def _sync_status(
        self,
        deployment: dict[str, Any],
        all_sets: list[dict[str, Any]],
        new_rs: dict[str, Any] | None,
    ) -> float | None:
        now = self._clock()
        status = du.calculate_status(deployment, all_sets, new_rs, now)
        name = new_rs["metadata"]["name"] if new_rs else ""
        current = du.condition(status, "Progressing")
        done = (
            status["replicas"] == status["updatedReplicas"]
            and current is not None
            and current.get("reason") == du.NEW_RS_AVAILABLE
        )
        if (deployment.get("spec") or {}).get("progressDeadlineSeconds") is not None and not done:
            if du.complete(deployment, status):
                du.set_condition(
                    status,
                    "Progressing",
                    "True",
                    du.NEW_RS_AVAILABLE,
                    f'ReplicaSet "{name}" has successfully progressed.',
                    now,
                )
            elif du.progressing(deployment, status):
                du.set_condition(
                    status,
                    "Progressing",
                    "True",
                    du.RS_UPDATED,
                    f'ReplicaSet "{name}" is progressing.',
                    now,
                )
            else:
                left = du.deadline_left(deployment, status, now)
                if left is not None and left <= 0:
                    du.set_condition(
                        status,
                        "Progressing",
                        "False",
                        du.TIMED_OUT,
                        f'ReplicaSet "{name}" has timed out progressing.',
                        now,
                    )
        self._write_status(deployment, status)
        left = du.deadline_left(deployment, status, now)
        return left + 0.5 if left is not None and left > 0 else None

    def _write_status(self, deployment: dict[str, Any], status: dict[str, Any]) -> None:
        if status == (deployment.get("status") or {}):
            return
        current = self._client.get(
            DEPLOYMENTS, deployment["metadata"]["namespace"], deployment["metadata"]["name"]
        )
        current["status"] = status
        self._client.update(
            DEPLOYMENTS,
            current["metadata"]["namespace"],
            current["metadata"]["name"],
            current,
            subresource="status",
        )
