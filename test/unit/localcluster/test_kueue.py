"""The play of Kueue's kubeflow job integration (``localcluster.kueue``), on jobs in memory:
the facts of kueue's ``kubeflowjob`` and ``podset`` tests (pod set order and names, merge
conflicts, tolerations, restore, the Finished/PodsReady/IsActive readings) and how it writes
(a merge patch carrying the resourceVersion, redone from a fresh read after a 409)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from localcluster import kueue
from localcluster.apimachinery.patches import merge_patch as apply_merge_patch  # as the server does
from localcluster.kueue import (
    PYTORCHJOB,
    Conflict,
    InvalidPodSetInfo,
    Kueue,
    PodSetInfo,
    merge_patch,
    same_toleration,
)


class MemoryJobs:
    """Jobs in a dict; a patch whose resourceVersion is stale is a 409. ``meddle`` runs once
    before the next patch, as a concurrent writer would."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.patches: list[dict[str, Any]] = []
        self.conflicts = 0
        self.meddle: Any = None

    def put(self, job: dict[str, Any]) -> None:
        job["metadata"].setdefault("namespace", "default")
        job["metadata"]["resourceVersion"] = "1"
        self.objects["default", job["metadata"]["name"]] = job

    def get(self, namespace: str, name: str) -> dict[str, Any]:
        return copy.deepcopy(self.objects[namespace, name])

    def merge_patch(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        if self.meddle is not None:
            meddle, self.meddle = self.meddle, None
            meddle(self.objects[namespace, name])
            self._bump(namespace, name)
        self.patches.append(copy.deepcopy(patch))
        current = self.objects[namespace, name]
        if patch["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
            self.conflicts += 1
            raise Conflict("the object has been modified")
        self.objects[namespace, name] = apply_merge_patch(current, patch)
        self._bump(namespace, name)
        return self.get(namespace, name)

    def _bump(self, namespace: str, name: str) -> None:
        meta = self.objects[namespace, name]["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)


def template(**spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "tensorflow", "image": "x"}], **spec}}


def tfjob(name: str, types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"runPolicy": {"suspend": True}, "tfReplicaSpecs": types},
    }


def four_types() -> dict[str, Any]:
    """Written in an order of its own; Kueue's is Chief, Master, PS, Worker, Evaluator."""
    return {
        "Evaluator": {"template": template()},
        "Worker": {"replicas": 3, "template": template(nodeSelector={"disk": "ssd"})},
        "PS": {"replicas": 2, "template": template()},
        "Chief": {"replicas": 1, "template": template()},
    }


@pytest.fixture
def jobs() -> MemoryJobs:
    return MemoryJobs()


def test_the_workload_has_a_pod_set_per_replica_type_in_kueues_order(jobs):
    jobs.put(tfjob("job", four_types()))
    workload = Kueue(jobs).workload("default", "job")
    assert workload.pod_set_names == ["chief", "ps", "worker", "evaluator"]
    assert [(p.replica_type, p.count) for p in workload.pod_sets] == [
        ("Chief", 1),
        ("PS", 2),
        ("Worker", 3),
        ("Evaluator", 1),  # replicas unset counts 1
    ]
    assert workload.pod_sets[2].template.node_selector == {"disk": "ssd"}


def test_no_workload_while_the_job_has_active_pods(jobs):
    job = tfjob("job", four_types())
    job["status"] = {"replicaStatuses": {"Worker": {"active": 1}}}
    jobs.put(job)
    with pytest.raises(RuntimeError, match="active"):
        Kueue(jobs).workload("default", "job")


def test_admission_i_goes_to_pod_set_i_and_unsuspends(jobs):
    jobs.put(tfjob("job", four_types()))
    queue = Kueue(jobs)
    workload = queue.workload("default", "job")
    infos = [PodSetInfo(node_selector={"pool": p}) for p in ("c", "p", "w", "e")]
    admitted = queue.admit(workload, infos)
    specs = admitted["spec"]["tfReplicaSpecs"]
    assert admitted["spec"]["runPolicy"]["suspend"] is False
    for rtype, pool in (("Chief", "c"), ("PS", "p"), ("Evaluator", "e")):
        spec = specs[rtype]["template"]
        assert spec["spec"]["nodeSelector"] == {"pool": pool}
        assert spec["metadata"]["labels"] == {kueue.PODSET_LABEL: rtype.lower()}
    # merged into what the template had
    assert specs["Worker"]["template"]["spec"]["nodeSelector"] == {"disk": "ssd", "pool": "w"}


def test_admission_needs_one_info_per_pod_set(jobs):
    jobs.put(tfjob("job", four_types()))
    queue = Kueue(jobs)
    with pytest.raises(InvalidPodSetInfo, match="expecting 4 podset, got 1"):
        queue.admit(queue.workload("default", "job"), [PodSetInfo()])
    assert jobs.patches == []


def test_a_key_the_template_has_with_another_value_fails_the_admission(jobs):
    jobs.put(tfjob("job", {"Worker": {"template": template(nodeSelector={"pool": "x"})}}))
    queue = Kueue(jobs)
    with pytest.raises(InvalidPodSetInfo, match="conflict for nodeSelector: conflict for key=pool"):
        queue.admit(queue.workload("default", "job"), [PodSetInfo(node_selector={"pool": "y"})])
    assert jobs.patches == [] and jobs.get("default", "job")["spec"]["runPolicy"]["suspend"]


def test_tolerations_are_appended_unless_an_equal_one_is_there():
    mine = PodSetInfo(tolerations=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    added = PodSetInfo(
        tolerations=[
            # operator unset means Equal; tolerationSeconds does not count
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
        ]
    )
    assert [t["key"] for t in mine.merged(added).tolerations] == ["k", "gpu"]
    assert same_toleration({"key": "a", "tolerationSeconds": 5}, {"key": "a", "operator": "Equal"})
    assert not same_toleration({"key": "a", "operator": "Exists"}, {"key": "a"})


def test_eviction_suspends_and_restores_every_template(jobs):
    original = tfjob("job", four_types())
    original["spec"]["tfReplicaSpecs"]["PS"]["template"]["metadata"] = {"labels": {"team": "a"}}
    jobs.put(original)
    queue = Kueue(jobs)
    workload = queue.workload("default", "job")
    toleration = {"key": "pool", "operator": "Exists", "effect": "NoSchedule"}
    queue.admit(
        workload,
        [PodSetInfo({"l": "1"}, {"a": "1"}, {"pool": "b"}, [toleration]) for _ in range(4)],
    )
    evicted = queue.evict(workload)
    assert evicted["spec"]["runPolicy"]["suspend"] is True
    for rtype, spec in original["spec"]["tfReplicaSpecs"].items():
        restored = evicted["spec"]["tfReplicaSpecs"][rtype]["template"]
        assert PodSetInfo.of_template(restored) == PodSetInfo.of_template(spec["template"])
        assert restored["spec"]["containers"] == spec["template"]["spec"]["containers"]
    # the merge patch removed what admission added: labels gone where there were none
    restore = jobs.patches[-1]["spec"]["tfReplicaSpecs"]
    assert restore["Chief"]["template"]["metadata"]["labels"] is None
    assert restore["PS"]["template"]["metadata"]["labels"] == {"l": None, kueue.PODSET_LABEL: None}


def test_writes_are_merge_patches_with_the_resource_version_read(jobs):
    jobs.put(tfjob("job", {"Worker": {"template": template()}}))
    queue = Kueue(jobs)
    queue.admit(queue.workload("default", "job"), [PodSetInfo(node_selector={"pool": "a"})])
    (patch,) = jobs.patches
    assert patch["metadata"] == {"resourceVersion": "1"}
    assert patch["spec"]["runPolicy"] == {"suspend": False}
    assert set(patch["spec"]) == {"runPolicy", "tfReplicaSpecs"}


def test_a_concurrent_write_makes_it_redo_the_change_from_a_fresh_read(jobs):
    jobs.put(tfjob("job", {"Worker": {"template": template()}}))
    queue = Kueue(jobs)
    workload = queue.workload("default", "job")

    def operator_writes_status(job: dict[str, Any]) -> None:
        job["status"] = {"conditions": [{"type": "Suspended", "status": "True"}]}

    jobs.meddle = operator_writes_status
    admitted = queue.admit(workload, [PodSetInfo(node_selector={"pool": "a"})])
    assert jobs.conflicts == 1 and len(jobs.patches) == 2
    assert jobs.patches[1]["metadata"]["resourceVersion"] == "2"
    assert admitted["status"]["conditions"][0]["type"] == "Suspended"
    assert admitted["spec"]["runPolicy"]["suspend"] is False


def test_kinds_differ_in_field_and_order(jobs):
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"template": {}}, "Master": {"template": {}}}},
    }
    jobs.put(job)
    queue = Kueue(jobs, PYTORCHJOB)
    assert queue.workload("default", "pt").pod_set_names == ["master", "worker"]
    assert queue.pod_selector("pt") == (
        "training.kubeflow.org/job-name=pt,training.kubeflow.org/operator-name=pytorchjob-controller"
    )


def test_the_webhook_suspends_only_jobs_that_name_a_queue():
    named = tfjob("a", {})
    named["spec"]["runPolicy"] = {}
    named["metadata"]["labels"] = {kueue.QUEUE_LABEL: "user-queue"}
    assert kueue.default_on_create(named)["spec"]["runPolicy"]["suspend"] is True
    plain = {"metadata": {"name": "b"}, "spec": {}}
    assert kueue.default_on_create(plain) == {"metadata": {"name": "b"}, "spec": {}}


def test_what_kueue_reads_from_the_job():
    def job(conditions: list[tuple[str, str]], active: int = 0) -> dict[str, Any]:
        return {
            "status": {
                "conditions": [{"type": t, "status": s, "message": t} for t, s in conditions],
                "replicaStatuses": {"PS": {}, "Worker": {"active": active}},
            }
        }

    assert kueue.finished({}) == (False, True, "")
    assert kueue.finished(job([("Succeeded", "True")])) == (True, True, "Succeeded")
    assert kueue.finished(job([("Failed", "True")])) == (True, False, "Failed")
    assert not kueue.finished(job([("Succeeded", "False")])).finished
    assert kueue.pods_ready(job([("Running", "True")]))
    assert not kueue.pods_ready(job([("Running", "False"), ("Suspended", "True")]))
    assert kueue.is_active(job([], active=2)) and not kueue.is_active(job([]))


def test_merge_patch_round_trips():
    before = {"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": {"f": 1}}
    after = {"a": {"b": 2, "c": [1, 3]}, "e": {}, "g": [3]}
    patch = merge_patch(before, after)
    assert patch == {"a": {"b": 2, "c": [1, 3]}, "d": None, "e": {"f": None}, "g": [3]}
    assert apply_merge_patch(before, patch) == after
    assert merge_patch(after, after) == {}
