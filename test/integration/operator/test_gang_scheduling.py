"""--enable-gang-scheduling: PodGroup and pod decoration for kube-batch and Volcano.

The local scheduler only binds default-scheduler pods, so the gang's pods stay Pending until
the test plays the batch scheduler: with Volcano it first admits the group (the operator creates
no pod before), then once the whole gang exists it binds every pod at once; the job then runs,
succeeds, and the operator deletes its PodGroup."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
BACKENDS = {
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "gang-kube-batch"),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "gang-volcano"),
}


@pytest.mark.parametrize("scheduler", list(BACKENDS))
def test_podgroup_and_pod_annotations(sim, operators, scheduler):
    import yaml

    group, version, component = BACKENDS[scheduler]
    crd = yaml.safe_load((ROOT / f"manifests/components/{component}/podgroup-crd.yaml").read_text())
    try:
        sim.client.create(("apiextensions.k8s.io", "v1", "customresourcedefinitions"), None, crd)
    except Exception as err:  # noqa: BLE001 - installed by the other parametrisation
        assert "exists" in str(err).lower()
    op = operators(
        sim,
        "--enable-gang-scheduling=true",
        f"--gang-scheduler-name={scheduler}",
        "--no-leader-elect",
    )
    op.wait_log("Creating TFJob controller|Starting|workers", 30)
    name = f"gang-{scheduler}"
    finishing = {"localcluster.tf-operator.io/run-seconds": "0.3"}
    sim.create(sim.job(name, {"PS": {}, "Worker": {"replicas": 3, "annotations": finishing}}))
    podgroups = (group, version, "podgroups")
    pg = sim.wait_for(lambda: sim.client.get(podgroups, "default", name), 30, "PodGroup")
    assert pg["spec"]["minMember"] == 4
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
    if scheduler == "volcano":
        # training-operator v1.9's Inqueue gating: no pod before Volcano admits the group;
        # play Volcano's enqueue action (its PodGroup CRD has no status subresource)
        sim.wait_for(
            lambda: any(e["reason"] == "PodGroupPending" for e in sim.events(name)),
            30,
            "the PodGroupPending event",
        )
        assert sim.pods(name) == []
        sim.client.patch(podgroups, "default", name, {"status": {"phase": "Inqueue"}}, "merge")
    pods = sim.wait_for(lambda: len(sim.pods(name)) == 4 and sim.pods(name), 30, "4 pods")
    for pod in pods:
        assert pod["spec"]["schedulerName"] == scheduler
        annotations = pod["metadata"]["annotations"]
        assert annotations["scheduling.k8s.io/group-name"] == name
        rt = pod["metadata"]["labels"]["tf-replica-type"]
        assert annotations["volcano.sh/task-spec"] == rt
        assert pod["status"].get("phase", "Pending") == "Pending"
        assert not pod["spec"].get("nodeName")

    # Play the gang scheduler: all members are there, bind them together.
    node = sim.cluster.node_names[0]
    for pod in pods:
        sim.client.bind("default", pod["metadata"]["name"], node)
    sim.wait_condition(name, "Succeeded", 30)
    sim.wait_for(lambda: not _exists(sim, podgroups, name), 30, "PodGroup deleted")
    # events are sent asynchronously: the deletion may be seen before its event
    sim.wait_for(
        lambda: any(e["reason"] == "SuccessfulDeletePodGroup" for e in sim.events(name)),
        30,
        "the SuccessfulDeletePodGroup event",
    )


def _exists(sim, gvr, name):
    items = sim.client.list(gvr, "default").items
    return any(i["metadata"]["name"] == name for i in items)
