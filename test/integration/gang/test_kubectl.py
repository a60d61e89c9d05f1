"""kubectl against the local cluster's gang scheduling objects, for both API groups: PodGroups
and Queues list with their printer columns, ``kubectl describe`` shows status, conditions and
the scheduler's events; the kube-batch overlay and its default Queue apply cleanly."""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import BACKENDS, kubectl, wait_for

from .conftest import PODS, ROOT

pytestmark = pytest.mark.integration

GROUPS = {
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups"),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
}


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=[NodePool("n", cpu="2", memory="8Gi")],
        batch_schedulers=("kube-batch", "volcano"),
        batch_schedule_period=0,
    ) as c:
        c.kubectl = lambda *args: kubectl(c, *args, home=str(home), check=True).stdout
        for flavour, gvr in GROUPS.items():
            for name, cpu in (("fits", "1"), ("too-big", "3")):
                group = f"{flavour}-{name}"
                c.client.create(
                    gvr,
                    "default",
                    {
                        "apiVersion": f"{gvr[0]}/{gvr[1]}",
                        "kind": "PodGroup",
                        "metadata": {"name": group},
                        "spec": {"minMember": 1},
                    },
                )
                pod = {
                    "metadata": {
                        "name": f"{group}-0",
                        "annotations": {"scheduling.k8s.io/group-name": group},
                    },
                    "spec": {
                        "schedulerName": flavour,
                        "containers": [
                            {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                        ],
                    },
                }
                c.client.create(PODS, "default", pod)
            scheduler = c.batch_schedulers[flavour]

            def seen(scheduler=scheduler) -> bool:
                # over HTTP (the real control plane) the scheduler's watch delivers the pods a
                # moment after they are stored: one cycle must see both groups with their pod
                jobs = scheduler.cache.snapshot().jobs.values()
                return sum(len(job.tasks) for job in jobs) == 2

            wait_for(seen, 30, what=f"{flavour} seeing its two pods")
            scheduler.run_once()
        yield c


@pytest.mark.parametrize("flavour", list(GROUPS))
def test_get_podgroups_shows_phase_and_members(cluster, flavour):
    group = GROUPS[flavour][0]
    out = cluster.kubectl("get", f"podgroups.{group}")
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["NAME", "STATUS", "MINMEMBER", "RUNNINGS"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows[f"{flavour}-fits"][1] == "Running"
    pending = "Inqueue" if flavour == "volcano" else "Pending"
    assert rows[f"{flavour}-too-big"][1] == pending
    queues = cluster.kubectl("get", f"queues.{group}", "-o", "name")
    assert queues.split() == [f"queue.{group}/default"]


@pytest.mark.parametrize("flavour", list(GROUPS))
def test_describe_podgroup_shows_conditions_and_events(cluster, flavour):
    group = GROUPS[flavour][0]
    out = cluster.kubectl("describe", f"podgroups.{group}", f"{flavour}-too-big")
    assert "Unschedulable" in out and "NotEnoughResources" in out
    assert "1/1 tasks in gang unschedulable" in out
    assert "Events:" in out and "Warning  Unschedulable" in out
    pod = cluster.kubectl("describe", "pod", f"{flavour}-too-big-0")
    reason = "FailedScheduling" if flavour == "volcano" else "Unschedulable"
    assert f"Warning  {reason}" in pod


def test_pg_short_name_is_volcanos(cluster):
    out = cluster.kubectl("get", "pg", "-o", "name")
    assert sorted(out.split()) == [
        "podgroup.scheduling.volcano.sh/volcano-fits",
        "podgroup.scheduling.volcano.sh/volcano-too-big",
    ]


def test_kube_batch_overlay_then_default_queue_apply(tmp_path, control_plane):
    with LocalCluster(control_plane=control_plane, kubelet="none") as cluster:
        for target in ("overlays/gang-kube-batch", "components/gang-kube-batch/default-queue"):
            manifests = str(ROOT / "manifests" / target)
            out = kubectl(cluster, "apply", "-k", manifests, home=str(tmp_path), check=True)
        assert "queue.scheduling.incubator.k8s.io/default created" in out.stdout
        queue = cluster.client.get(
            ("scheduling.incubator.k8s.io", "v1alpha1", "queues"), None, "default"
        )
        assert queue["spec"] == {"weight": 1}
