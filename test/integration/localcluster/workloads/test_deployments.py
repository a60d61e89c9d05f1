"""Deployments and ReplicaSets on the local cluster (simulated kubelet), checked with kubectl
and with watches: ownership and hashes, rolling-update bounds, Recreate, scaling, history,
undo, progress deadline, garbage collection."""

from __future__ import annotations

import threading

import pytest

from localcluster.cluster import SimulatedTiming
from localcluster.kubelet.simulated import START_SECONDS
from localcluster.testing import cluster_fixture, wait_for
from localcluster.testing import kubectl as run_kubectl

pytestmark = pytest.mark.integration

DEPLOY = ("apps", "v1", "deployments")
RS = ("apps", "v1", "replicasets")
PODS = ("", "v1", "pods")
NS = ("", "v1", "namespaces")


cluster = cluster_fixture(kubelet="simulated", simulated=SimulatedTiming(start_delay=0.2))


@pytest.fixture
def ns(cluster, request):
    name = request.node.name.replace("_", "-")[:40].rstrip("-").lower()
    cluster.registry.create(NS, None, {"metadata": {"name": name}})
    return name


def kubectl(cluster, *args, check=True):
    return run_kubectl(cluster, *args, check=check, timeout=90)


def deployment(name, replicas=4, image="nginx:1", **spec):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


def rollout(cluster, ns, name, timeout="60s", check=True):
    return kubectl(
        cluster,
        "rollout",
        "status",
        f"deployment/{name}",
        "-n",
        ns,
        f"--timeout={timeout}",
        check=check,
    )


def active_pods(cluster, ns):
    pods, _ = cluster.registry.list(PODS, ns)
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and p["status"].get("phase") not in ("Succeeded", "Failed")
    ]


def test_deployment_owns_a_hashed_replica_set_that_owns_pods(cluster, ns):
    cluster.registry.create(DEPLOY, ns, deployment("web"))
    assert 'deployment "web" successfully rolled out' in rollout(cluster, ns, "web").stdout
    (rs,) = cluster.registry.list(RS, ns)[0]
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    pods = active_pods(cluster, ns)
    assert len(pods) == 4
    for pod in pods:
        assert pod["metadata"]["name"].startswith(f"web-{pod_hash}-")
        assert pod["metadata"]["labels"]["pod-template-hash"] == pod_hash
        (ref,) = pod["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref["controller"]) == (
            "ReplicaSet",
            rs["metadata"]["name"],
            True,
        )
    d = cluster.registry.get(DEPLOY, ns, "web")
    assert d["status"]["readyReplicas"] == d["status"]["availableReplicas"] == 4
    assert {c["type"]: c["reason"] for c in d["status"]["conditions"]} == {
        "Available": "MinimumReplicasAvailable",
        "Progressing": "NewReplicaSetAvailable",
    }
    table = kubectl(cluster, "get", "deploy,rs", "-n", ns, "-o", "wide").stdout
    assert "READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES    SELECTOR" in table
    assert "deployment.apps/web   4/4     4            4" in table
    assert f"replicaset.apps/web-{pod_hash}   4         4         4" in table
    assert f"app=web,pod-template-hash={pod_hash}" in table


class Tracker:
    """Replays a watch of one resource from a list, calling ``measure(objects)`` at every
    event, so every intermediate state is seen, in order."""

    def __init__(self, cluster, gvr, ns, measure):
        items, rv = cluster.registry.list(gvr, ns)
        self.objects = {o["metadata"]["name"]: o for o in items}
        self.samples = [measure(self.objects.values())]
        self._watch = cluster.registry.watch(gvr, namespace=ns, resource_version=rv)
        self._measure = measure
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        while True:
            event = self._watch.get(0.05)
            if event is None:
                if self._stop.is_set():
                    return
                continue
            kind, obj = event
            if kind == "DELETED":
                self.objects.pop(obj["metadata"]["name"], None)
            else:
                self.objects[obj["metadata"]["name"]] = obj
            self.samples.append(self._measure(self.objects.values()))

    def stop(self):
        self._stop.set()
        self._thread.join()
        self._watch.stop()
        return self.samples


def ready(pod):
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in pod["status"].get("conditions") or []
    )


def test_rolling_update_respects_surge_and_unavailability(cluster, ns):
    """4 replicas with the 25% defaults: the sets never ask for more than 5 pods (maxSurge
    bounds the sum of their replicas), and never fewer than 3 pods are ready."""
    cluster.registry.create(DEPLOY, ns, deployment("roll"))
    rollout(cluster, ns, "roll")
    live = lambda pods: [p for p in pods if not p["metadata"].get("deletionTimestamp")]  # noqa: E731
    pods = Tracker(
        cluster,
        PODS,
        ns,
        lambda ps: (
            sum(1 for p in live(ps) if ready(p)),
            len({p["spec"]["containers"][0]["image"] for p in live(ps)}),
        ),
    )
    sets = Tracker(cluster, RS, ns, lambda rss: sum(r["spec"]["replicas"] for r in rss))
    kubectl(cluster, "set", "image", "deployment/roll", "c=nginx:2", "-n", ns)
    out = rollout(cluster, ns, "roll").stdout
    pod_samples, set_samples = pods.stop(), sets.stop()
    assert "successfully rolled out" in out
    assert max(set_samples) == 5  # surged by exactly maxSurge
    assert min(r for r, _ in pod_samples) >= 3
    assert any(images == 2 for _, images in pod_samples)  # old and new side by side
    images = {p["spec"]["containers"][0]["image"] for p in active_pods(cluster, ns)}
    assert images == {"nginx:2"}
    revisions = {
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: r["spec"]["replicas"]
        for r in cluster.registry.list(RS, ns)[0]
    }
    assert revisions == {"1": 0, "2": 4}
    events = kubectl(cluster, "describe", "deployment", "roll", "-n", ns).stdout
    assert "Scaled up replica set" in events and "Scaled down replica set" in events


def test_recreate_stops_old_pods_before_starting_new_ones(cluster, ns):
    cluster.registry.create(DEPLOY, ns, deployment("rec", 3, strategy={"type": "Recreate"}))
    rollout(cluster, ns, "rec")
    mixed = []
    stop = threading.Event()

    def observe():
        watch = cluster.registry.watch(PODS, namespace=ns)
        try:
            while not stop.is_set():
                if watch.get(0.05) is not None:
                    images = {
                        p["spec"]["containers"][0]["image"]
                        for p in cluster.registry.list(PODS, ns)[0]
                    }
                    mixed.append(len(images) > 1)
        finally:
            watch.stop()

    watcher = threading.Thread(target=observe)
    watcher.start()
    kubectl(cluster, "set", "image", "deployment/rec", "c=nginx:2", "-n", ns)
    rollout(cluster, ns, "rec")
    stop.set()
    watcher.join()
    assert mixed and not any(mixed)


def test_scale_history_limit_and_undo(cluster, ns):
    cluster.registry.create(DEPLOY, ns, deployment("hist", 2, revisionHistoryLimit=1))
    rollout(cluster, ns, "hist")
    for image in ("nginx:2", "nginx:3"):
        kubectl(cluster, "set", "image", "deployment/hist", f"c={image}", "-n", ns)
        rollout(cluster, ns, "hist")
    revisions = sorted(
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        for r in cluster.registry.list(RS, ns)[0]
    )
    assert revisions == ["2", "3"]  # revision 1 pruned beyond the history limit
    kubectl(cluster, "rollout", "undo", "deployment/hist", "-n", ns)
    rollout(cluster, ns, "hist")
    images = {p["spec"]["containers"][0]["image"] for p in active_pods(cluster, ns)}
    assert images == {"nginx:2"}
    revisions = sorted(
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        for r in cluster.registry.list(RS, ns)[0]
    )
    assert revisions == ["3", "4"]  # the revision-2 set came back as revision 4
    kubectl(cluster, "scale", "deployment/hist", "--replicas=5", "-n", ns)
    rollout(cluster, ns, "hist")
    assert len(active_pods(cluster, ns)) == 5
    kubectl(cluster, "scale", "deployment/hist", "--replicas=1", "-n", ns)
    wait_for(lambda: len(active_pods(cluster, ns)) == 1, 30)


def test_progress_deadline_fails_rollout_status(cluster, ns):
    body = deployment("slow", 1, progressDeadlineSeconds=2)
    body["spec"]["template"]["metadata"]["annotations"] = {START_SECONDS: "3600"}
    cluster.registry.create(DEPLOY, ns, body)
    proc = rollout(cluster, ns, "slow", timeout="60s", check=False)
    assert proc.returncode != 0
    assert 'deployment "slow" exceeded its progress deadline' in proc.stderr
    d = cluster.registry.get(DEPLOY, ns, "slow")
    progressing = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")


def test_deleting_a_deployment_collects_its_sets_and_pods(cluster, ns):
    cluster.registry.create(DEPLOY, ns, deployment("gone", 2))
    rollout(cluster, ns, "gone")
    kubectl(cluster, "delete", "deployment", "gone", "-n", ns)
    wait_for(
        lambda: not cluster.registry.list(RS, ns)[0] and not cluster.registry.list(PODS, ns)[0], 30
    )


def test_replica_set_replaces_deleted_pods_and_adopts_orphans(cluster, ns):
    orphan = {
        "metadata": {"name": "stray", "labels": {"app": "solo"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    cluster.registry.create(PODS, ns, orphan)
    body = deployment("solo", 3)
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "solo"},
        "spec": body["spec"],
    }
    cluster.registry.create(RS, ns, rs)
    wait_for(
        lambda: cluster.registry.get(RS, ns, "solo").get("status", {}).get("readyReplicas") == 3, 30
    )
    stray = cluster.registry.get(PODS, ns, "stray")
    assert stray["metadata"]["ownerReferences"][0]["name"] == "solo"  # adopted: counts as one
    assert len(active_pods(cluster, ns)) == 3
    cluster.registry.delete(PODS, ns, "stray")
    wait_for(
        lambda: (
            len(active_pods(cluster, ns)) == 3
            and all(p["metadata"]["name"] != "stray" for p in active_pods(cluster, ns))
        ),
        30,
    )
    events = kubectl(
        cluster, "get", "events", "-n", ns, "--field-selector=involvedObject.kind=ReplicaSet"
    ).stdout
    assert "SuccessfulCreate" in events
