"""Endpoints controller rules: subsets from a service and its pods, and the selector index."""

from localcluster.controllers.endpoints import build_subsets


def pod(
    name, ip, ready=True, phase="Running", deleting=False, ports=None, hostname=None, subdomain=None
):
    spec = {"nodeName": "n0", "containers": [{"name": "c", "ports": ports or []}]}
    if hostname:
        spec.update(hostname=hostname, subdomain=subdomain)
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    if ip:
        status["podIP"] = ip
    return {"metadata": meta, "spec": spec, "status": status}


def service(ports, publish=False):
    spec = {"selector": {"app": "x"}, "ports": ports, "clusterIP": "None"}
    if publish:
        spec["publishNotReadyAddresses"] = True
    return {"metadata": {"name": "svc", "namespace": "default"}, "spec": spec}


def test_ready_and_not_ready_addresses_sorted_by_ip_and_skipping_dead_pods():
    pods = [
        pod("b", "127.1.0.10"),
        pod("a", "127.1.0.9"),
        pod("c", "127.1.0.11", ready=False),
        pod("d", None),
        pod("e", "127.1.0.12", deleting=True),
        pod("f", "127.1.0.13", phase="Succeeded"),
    ]
    (subset,) = build_subsets(service([{"name": "grpc", "port": 2222, "targetPort": 2222}]), pods)
    assert [a["ip"] for a in subset["addresses"]] == ["127.1.0.9", "127.1.0.10"]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == ["127.1.0.11"]
    assert subset["ports"] == [{"port": 2222, "protocol": "TCP", "name": "grpc"}]
    assert subset["addresses"][0]["targetRef"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "a",
        "uid": "uid-a",
    }


def test_named_target_ports_resolve_per_pod_and_publish_not_ready():
    pods = [
        pod("a", "127.1.0.1", ports=[{"name": "web", "containerPort": 8080}]),
        pod("b", "127.1.0.2", ready=False, ports=[{"name": "web", "containerPort": 9090}]),
    ]
    subsets = build_subsets(service([{"port": 80, "targetPort": "web"}], publish=True), pods)
    by_port = {s["ports"][0]["port"]: [a["ip"] for a in s["addresses"]] for s in subsets}
    assert by_port == {8080: ["127.1.0.1"], 9090: ["127.1.0.2"]}


def test_headless_hostname_is_published_for_matching_subdomain():
    (subset,) = build_subsets(
        service([{"port": 1}]), [pod("a", "127.1.0.1", hostname="h", subdomain="svc")]
    )
    assert subset["addresses"][0]["hostname"] == "h"


def test_selector_index_finds_exactly_the_selecting_services():
    from localcluster.controllers.endpoints import SelectorIndex

    index = SelectorIndex()
    index.set("ns/a", "ns", {"job": "j", "replica": "ps"})
    index.set("ns/b", "ns", {"job": "j"})
    index.set("other/c", "other", {"job": "j"})
    index.set("ns/d", "ns", None)
    assert index.matching("ns", {"job": "j", "replica": "ps", "x": "y"}) == {"ns/a", "ns/b"}
    assert index.matching("ns", {"job": "j", "replica": "worker"}) == {"ns/b"}
    index.set("ns/b", "ns", {"job": "k"})
    assert index.matching("ns", {"job": "j"}) == set()
    index.remove("ns/a")
    assert index.matching("ns", {"job": "j", "replica": "ps"}) == set()


def tfjob_labels(job: str, rtype: str, index: int) -> dict:
    return {
        "group-name": "kubeflow.org",
        "job-name": job,
        "tf-job-name": job,
        "tf-replica-type": rtype,
        "tf-replica-index": str(index),
    }


def test_selector_index_files_each_service_under_a_rare_pair():
    """With thousands of TFJob services sharing ``group-name=kubeflow.org``, a pod event
    looks at a handful of services, not at all of them."""
    from localcluster.controllers.endpoints import SelectorIndex

    index = SelectorIndex()
    for job in range(2000):
        for rtype, i in (("ps", 0), ("worker", 0), ("worker", 1)):
            index.set(f"ns/j{job}-{rtype}-{i}", "ns", tfjob_labels(f"j{job}", rtype, i))
    assert max(len(keys) for keys in index._by_pair.values()) <= 3
    pod_labels = tfjob_labels("j1234", "worker", 1)
    assert index.matching("ns", pod_labels) == {"ns/j1234-worker-1"}
    looked_at = sum(len(index._by_pair.get(("ns", k, v), ())) for k, v in pod_labels.items())
    assert looked_at <= 12  # of 6,000 services


def test_label_index_candidates_come_from_the_smallest_bucket():
    from localcluster.controllers.endpoints import LabelIndex

    index = LabelIndex()
    for job in range(1000):
        for i in range(4):
            index.set(f"ns/j{job}-worker-{i}", "ns", tfjob_labels(f"j{job}", "worker", i))
    index.set("other/j7-worker-0", "other", tfjob_labels("j7", "worker", 0))
    assert index.candidates("ns", {"tf-job-name": "j7", "group-name": "kubeflow.org"}) == {
        f"ns/j7-worker-{i}" for i in range(4)
    }
    assert index.candidates("ns", tfjob_labels("j7", "worker", 2)) <= {
        f"ns/j7-worker-{i}" for i in range(4)
    }
    assert index.candidates("ns", {"tf-job-name": "nope"}) == set()
    assert index.candidates("ns", {}) == set()
    index.set("ns/j7-worker-2", "ns", {"tf-job-name": "moved"})
    assert "ns/j7-worker-2" not in index.candidates("ns", {"tf-job-name": "j7"})
    assert index.candidates("ns", {"tf-job-name": "moved"}) == {"ns/j7-worker-2"}
    index.remove("ns/j7-worker-2")
    assert index.candidates("ns", {"tf-job-name": "moved"}) == set()
    assert ("ns", "tf-job-name", "moved") not in index._by_pair
