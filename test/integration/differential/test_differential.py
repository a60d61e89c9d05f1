"""The emulator answers as kube-apiserver v1.37 does: the same request sequences sent to both.

Each test runs one sequence on the real control plane and on the emulated cluster at once
(``harness.compare``), in a namespace of its own with the same name on both, and asserts that
the two records, normalised (see ``harness``), are equal. A difference fails the test with
the diff (real first). The emulator's deliberate differences are listed in
``docs/emulator-differences.md``; a sequence avoids them rather than normalising them away.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from integration.differential.harness import Answer, Recorder, Step, compare

pytestmark = pytest.mark.integration

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
LABEL = {"differential": "yes"}
SELECTED = {"labelSelector": "differential=yes"}


def namespace(r: Recorder, name: str) -> str:
    """Create the sequence's namespace and wait for its default service account."""
    r.send(Step("POST", "/api/v1/namespaces", {"metadata": {"name": name}}))
    r.until(
        Step("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default"),
        Answer.ok,
        what="the default service account",
    )
    # published by a controller: waited for, so that it comes before the sequence's writes
    r.wait(Step("GET", f"/api/v1/namespaces/{name}/configmaps/kube-root-ca.crt"), Answer.ok)
    return name


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": dict(LABEL), **meta},
        "data": data or {"a": "1"},
    }


def tfjob(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf:1"}
    return {
        "apiVersion": f"kubeflow.org/{version}",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            },
            **spec,
        },
    }


def check(backends: Any, sequence: Any) -> None:
    diff = compare(backends, sequence)
    assert not diff, "the emulator answered otherwise than kube-apiserver:\n" + diff


# -- CRUD ---------------------------------------------------------------------------------


def test_configmap_crud(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-crud")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        created = r.send(Step("POST", base, configmap("one"))).body
        r.send(Step("POST", base, configmap("one")))  # AlreadyExists
        r.send(Step("GET", f"{base}/one"))
        r.send(Step("GET", f"{base}/missing"))
        stale = copy.deepcopy(created)
        changed = r.send(Step("PUT", f"{base}/one", {**created, "data": {"a": "2"}})).body
        r.send(Step("PUT", f"{base}/one", {**stale, "data": {"a": "3"}}))  # Conflict
        r.send(Step("PUT", f"{base}/one", changed))  # no change: same resourceVersion
        unversioned = copy.deepcopy(changed)
        del unversioned["metadata"]["resourceVersion"]
        r.send(Step("PUT", f"{base}/one", {**unversioned, "data": {"a": "4"}}))
        r.send(Step("PUT", f"{base}/absent", configmap("absent")))  # create on update
        r.send(Step("POST", base, {**configmap(""), "metadata": {"generateName": "gen-"}}))
        r.send(Step("GET", base, query={"labelSelector": "differential=yes"}))
        r.send(Step("DELETE", f"{base}/one"))
        r.send(Step("DELETE", f"{base}/one"))
        r.send(Step("POST", base, configmap("Bad_Name")))  # invalid name
        r.send(Step("POST", "/api/v1/namespaces/nowhere/configmaps", configmap("x")))

    check(backends, sequence)


def test_delete_preconditions_and_dry_run(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-delete")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        r.send(Step("POST", base, configmap("dry"), query={"dryRun": "All"}))
        r.send(Step("GET", f"{base}/dry"))
        r.send(Step("POST", base, configmap("kept")))
        other = "00000000-0000-4000-8000-000000000000"  # a uid no server made
        wrong = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": other}}
        r.send(Step("DELETE", f"{base}/kept", wrong))
        stale = {"preconditions": {"resourceVersion": "1"}}
        r.send(Step("DELETE", f"{base}/kept", stale))
        r.send(Step("DELETE", f"{base}/kept", query={"dryRun": "All"}))
        r.send(Step("GET", f"{base}/kept"))
        r.send(Step("DELETE", base, query={"labelSelector": "differential=yes"}))  # collection
        r.send(Step("GET", base, query={"labelSelector": "differential=yes"}))

    check(backends, sequence)


# -- patches ------------------------------------------------------------------------------


def test_patch_types(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-patch")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        r.send(Step("POST", base, configmap("p", {"a": "1", "b": "2"})))
        path = f"{base}/p"
        r.send(Step("PATCH", path, {"data": {"a": None, "c": "3"}}, MERGE))
        r.send(Step("PATCH", path, {"metadata": {"labels": {"x": "y"}}}, STRATEGIC))
        r.send(Step("PATCH", path, [{"op": "add", "path": "/data/d", "value": "4"}], JSON_PATCH))
        r.send(Step("PATCH", path, [{"op": "test", "path": "/data/d", "value": "5"}], JSON_PATCH))
        r.send(Step("PATCH", path, [{"op": "remove", "path": "/data/zz"}], JSON_PATCH))
        r.send(Step("PATCH", path, [{"op": "jump", "path": "/data"}], JSON_PATCH))
        r.send(Step("PATCH", path, {"data": {"a": "1"}}, "text/plain"))
        r.send(Step("PATCH", f"{base}/nothing", {"data": {}}, MERGE))
        r.send(Step("PATCH", path, {"data": {"e": 5}}, MERGE))  # wrong type
        apply = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "p"},
            "data": {"a": "9"},
        }
        r.send(Step("PATCH", path, apply, APPLY, query={"fieldManager": "one"}))
        # a second manager's apply of .data.a without force: kube-apiserver's 409 conflict is
        # not modelled (divergence D190), so only the forced apply is compared
        r.send(
            Step(
                "PATCH",
                path,
                {**apply, "data": {"a": "8"}},
                APPLY,
                query={"fieldManager": "two", "force": "true"},
            )
        )
        r.send(Step("PATCH", path, apply, APPLY))  # no field manager
        r.send(
            Step(
                "PATCH",
                f"{base}/applied",
                {**apply, "metadata": {"name": "applied"}},
                APPLY,
                query={"fieldManager": "one"},
            )
        )
        r.send(Step("PATCH", path, tfjob("p"), APPLY, query={"fieldManager": "one"}))  # wrong kind
        jobs = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        r.send(Step("POST", jobs, tfjob("patched")))
        r.send(Step("PATCH", f"{jobs}/patched", {"metadata": {"labels": {"a": "b"}}}, STRATEGIC))
        r.send(Step("PATCH", f"{jobs}/patched", {"metadata": {"labels": {"a": "b"}}}, MERGE))

    check(backends, sequence)


# -- field validation and malformed bodies ----------------------------------------------


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore"])
def test_unknown_fields(backends, mode):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, f"diff-fields-{mode.lower()}")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        query = {"fieldValidation": mode}
        unknown = {**configmap("unknown"), "extra": 1, "metadata": {"name": "unknown", "bogus": 2}}
        r.send(Step("POST", base, unknown, query=query))
        r.send(Step("POST", base, {**configmap("warned"), "extra": 1}))  # no mode: Warn
        jobs = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        job = tfjob("fields")
        job["spec"]["unknownField"] = True
        r.send(Step("POST", jobs, job, query=query))
        r.send(
            Step(
                "PATCH",
                f"{base}/nope-{mode.lower()}",
                {**configmap(f"nope-{mode.lower()}"), "extra": 1},
                APPLY,
                query={**query, "fieldManager": "m"},
            )
        )
        r.send(Step("PATCH", f"{base}/nope-{mode.lower()}", {"extra": 1}, MERGE, query=query))

    check(backends, sequence)


def test_malformed_bodies(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-malformed")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        r.send(Step("POST", base, "{not json"))
        r.send(Step("POST", base, ""))
        r.send(Step("POST", base, "[]"))
        r.send(Step("POST", base, {**configmap("k"), "kind": "Secret"}))
        r.send(Step("POST", base, {**configmap("k"), "apiVersion": "v2"}))
        r.send(Step("POST", base, {**configmap("k"), "apiVersion": "apps/v1"}))
        r.send(Step("POST", base, {"metadata": {"name": "nokind"}, "data": {"a": "1"}}))
        yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: '1'\n"
        r.send(Step("POST", base, yaml_body))  # YAML declared as JSON
        r.send(Step("POST", base, yaml_body, "application/yaml"))
        r.send(Step("POST", base, configmap("t"), "text/plain"))
        r.send(
            Step("POST", base, {**configmap("n"), "metadata": {"name": "n", "namespace": "other"}})
        )
        r.send(Step("PUT", f"{base}/y", {**configmap("z")}))  # name differs from the path
        r.send(Step("POST", base, {**configmap("d"), "data": {"a": 1}}))  # wrong type
        r.send(Step("POST", base, {**configmap("d"), "data": "text"}))
        jobs = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        r.send(Step("POST", jobs, "{not json"))
        r.send(Step("POST", jobs, {**tfjob("wrongkind"), "kind": "PyTorchJob"}))
        r.send(Step("POST", jobs, {"metadata": {"name": "nokind"}, "spec": {}}))  # no kind
        r.send(Step("POST", jobs, {**tfjob("wrongversion"), "apiVersion": "kubeflow.org/v9"}))
        r.send(Step("POST", jobs, {**tfjob("spec-type"), "spec": "text"}))

    check(backends, sequence)


# -- CRD admission with CEL, multi-version reads -------------------------------------------


def test_tfjob_cel_admission(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-cel")
        jobs = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        r.send(Step("POST", jobs, tfjob("good")))
        r.send(Step("POST", jobs, tfjob("bad.name")))
        two_leaders = tfjob("leaders")
        specs = two_leaders["spec"]["tfReplicaSpecs"]
        specs["Chief"] = specs["Master"] = copy.deepcopy(specs["Worker"])
        r.send(Step("POST", jobs, two_leaders))
        r.send(Step("POST", jobs, tfjob("unknown-type", tfReplicaSpecs={"Boss": {"replicas": 1}})))
        r.send(Step("POST", jobs, tfjob("negative", backoffLimit=-1)))
        r.send(Step("POST", jobs, tfjob("bad-policy", cleanPodPolicy="Sometimes")))
        r.send(
            Step(
                "POST",
                jobs,
                tfjob("both", cleanPodPolicy="All", runPolicy={"cleanPodPolicy": "None"}),
            )
        )
        queued = r.send(
            Step("POST", jobs, tfjob("queued", runPolicy={"schedulingPolicy": {"queue": "a"}}))
        ).body
        moved = copy.deepcopy(queued)
        moved["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "b"
        r.send(Step("PUT", f"{jobs}/queued", moved))
        r.send(
            Step(
                "PATCH",
                f"{jobs}/queued",
                {"spec": {"runPolicy": {"schedulingPolicy": {"queue": "c"}}}},
                MERGE,
            )
        )
        r.send(Step("PATCH", f"{jobs}/good", {"spec": {"backoffLimit": "x"}}, MERGE))

    check(backends, sequence)


def test_tfjob_read_through_both_versions(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-versions")
        v1 = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        v1beta2 = f"/apis/kubeflow.org/v1beta2/namespaces/{ns}/tfjobs"
        r.send(Step("POST", v1, tfjob("one")))
        r.send(Step("GET", f"{v1beta2}/one"))
        r.send(Step("POST", v1beta2, tfjob("two", "v1beta2")))
        r.send(Step("GET", f"{v1}/two"))
        r.send(Step("GET", v1beta2))
        r.send(Step("POST", v1beta2, tfjob("three")))  # v1 body to the v1beta2 path
        r.send(Step("GET", f"/apis/kubeflow.org/v1alpha1/namespaces/{ns}/tfjobs"))
        r.send(Step("GET", "/apis/kubeflow.org/v1/tfjobs", query={"limit": "500"}))

    check(backends, sequence)


# -- watch, paging --------------------------------------------------------------------


def test_watch_from_a_resource_version(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-watch")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        first = r.send(Step("POST", base, configmap("w"))).body["metadata"]["resourceVersion"]
        r.send(Step("PUT", f"{base}/w", {**configmap("w", {"a": "2"})}))
        r.send(Step("POST", base, configmap("v")))
        r.send(Step("DELETE", f"{base}/w"))
        r.watch(Step("GET", base, query={"watch": "1", "resourceVersion": first, **SELECTED}), 3)
        r.watch(
            Step(
                "GET",
                f"{base}",
                query={"watch": "1", "resourceVersion": first, "fieldSelector": "metadata.name=v"},
            ),
            1,
        )
        r.watch(Step("GET", base, query={"watch": "1", "resourceVersion": "not-a-number"}), 1)

    check(backends, sequence)


def test_list_paging(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-paging")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        for i in range(5):
            r.send(Step("POST", base, configmap(f"page-{i}")))
        query = {"labelSelector": "differential=yes", "limit": "2"}
        page = r.send(Step("GET", base, query=query)).body
        token = page["metadata"]["continue"]
        page = r.send(Step("GET", base, query={**query, "continue": token})).body
        r.send(Step("GET", base, query={**query, "continue": page["metadata"]["continue"]}))
        r.send(
            Step(
                "GET",
                base,
                query={
                    "limit": "2",
                    "labelSelector": "differential=yes",
                    "continue": token,
                    "resourceVersion": "0",
                },
            )
        )
        r.send(
            Step("GET", base, query={"labelSelector": "page!=x", "limit": "2", "continue": token})
        )
        r.send(
            Step(
                "GET",
                "/api/v1/namespaces/default/configmaps",
                query={"limit": "2", "continue": token},
            )
        )
        r.send(Step("GET", base, query={**query, "continue": "garbage"}))
        r.send(Step("GET", base, query={**query, "limit": "0"}))
        r.send(Step("GET", base, query={**query, "limit": "-1"}))

    check(backends, sequence)


# -- subresources ---------------------------------------------------------------------


def test_status_subresource(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-status")
        jobs = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        job = r.send(Step("POST", jobs, {**tfjob("s"), "status": {"conditions": []}})).body
        status = {
            "conditions": [{"type": "Created", "status": "True", "reason": "R", "message": "m"}]
        }
        changed = {**job, "status": status, "spec": {**job["spec"], "backoffLimit": 3}}
        job = r.send(Step("PUT", f"{jobs}/s/status", changed)).body
        r.send(
            Step(
                "PUT",
                f"{jobs}/s",
                {**job, "status": {}, "metadata": {**job["metadata"], "labels": {"l": "1"}}},
            )
        )
        r.send(
            Step(
                "PATCH",
                f"{jobs}/s/status",
                {"status": {"startTime": "2020-01-01T00:00:00Z"}},
                MERGE,
            )
        )
        r.send(Step("GET", f"{jobs}/s/status"))
        r.send(Step("GET", f"{jobs}/s/scale"))
        r.send(Step("PATCH", f"{jobs}/s/status", {"status": {"conditions": "no"}}, MERGE))

    check(backends, sequence)


def deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


def settled(replicas: int) -> Any:
    """The deployment controller has seen the newest spec and made ``replicas`` pods."""

    def done(answer: Answer) -> bool:
        body = answer.body
        status = body.get("status") or {}
        return (
            status.get("observedGeneration") == body["metadata"]["generation"]
            and status.get("replicas") == replicas
        )

    return done


def scale_spec(scale: dict[str, Any]) -> dict[str, Any]:
    """A Scale without its status: the controllers' progress races the sequence."""
    return {k: v for k, v in scale.items() if k != "status"}


def test_deployment_scale(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-scale")
        base = f"/apis/apps/v1/namespaces/{ns}/deployments"
        r.send(Step("POST", base, deployment("d")))
        r.wait(Step("GET", f"{base}/d"), settled(1))
        scale = r.send(Step("GET", f"{base}/d/scale")).body
        unversioned = {**scale, "metadata": {"name": "d", "namespace": ns}}
        r.send(Step("PUT", f"{base}/d/scale", {**unversioned, "spec": {"replicas": 3}}), scale_spec)
        r.send(Step("PATCH", f"{base}/d/scale", {"spec": {"replicas": 2}}, MERGE), scale_spec)
        r.send(Step("PUT", f"{base}/d/scale", {**unversioned, "spec": {"replicas": -1}}))
        r.send(Step("PUT", f"{base}/d/scale", {**scale, "spec": {"replicas": 4}}))  # stale
        r.send(Step("GET", f"{base}/missing/scale"))
        r.wait(Step("GET", f"{base}/d"), settled(2))
        r.send(Step("GET", f"{base}/d/scale"))
        r.send(Step("GET", f"{base}/d"), lambda d: {k: v for k, v in d.items() if k != "status"})

    check(backends, sequence)


# -- core objects with defaults -------------------------------------------------------


# what DefaultTolerationSeconds would add; written here, it adds nothing (D192)
TOLERATIONS = [
    {
        "key": f"node.kubernetes.io/{k}",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    for k in ("not-ready", "unreachable")
]


def without_priority(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod without what the Priority admission plugin sets (D192), and without the
    conditions the real kube-scheduler writes as it gives up on it (no nodes), racing the
    sequence: the emulated cluster runs no scheduler here."""
    spec = {k: v for k, v in pod["spec"].items() if k not in ("priority", "preemptionPolicy")}
    status = {k: v for k, v in pod.get("status", {}).items() if k != "conditions"}
    return {**pod, "spec": spec, "status": status}


def test_pod_and_service_defaults(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-defaults")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c", "image": "busybox"}],
                "automountServiceAccountToken": False,
                "tolerations": TOLERATIONS,
            },
        }
        pods = f"/api/v1/namespaces/{ns}/pods"
        r.send(Step("POST", pods, pod), without_priority)
        r.send(
            Step("PATCH", f"{pods}/p", {"spec": {"activeDeadlineSeconds": 5}}, STRATEGIC),
            without_priority,
        )
        r.send(Step("POST", pods, {**pod, "metadata": {"name": "q"}, "spec": {"containers": []}}))
        r.send(Step("DELETE", f"{pods}/p"), without_priority)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]},
        }
        r.send(Step("POST", f"/api/v1/namespaces/{ns}/services", service))
        headless = {
            **service,
            "metadata": {"name": "h"},
            "spec": {**service["spec"], "clusterIP": "None"},
        }
        r.send(Step("POST", f"/api/v1/namespaces/{ns}/services", headless))
        r.send(Step("DELETE", f"/api/v1/namespaces/{ns}/services/h"))

    check(backends, sequence)


# -- the eviction subresource ---------------------------------------------------------

# A node per sequence, created by it: kube-controller-manager marks the pods of a node that
# never reports as not ready once the node's grace period (50 s) has passed.
EVICTION_NODE = "diff-eviction-node"
BUDGET_NODE = "diff-budget-node"


def eviction(name: str, version: str = "v1", **delete_options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": f"policy/{version}",
        "kind": "Eviction",
        "metadata": {"name": name},
    }
    if delete_options:
        body["deleteOptions"] = delete_options
    return body


def without_admission_fields(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod without what the Priority admission plugin sets (D192)."""
    spec = {k: v for k, v in pod["spec"].items() if k not in ("priority", "preemptionPolicy")}
    return {**pod, "spec": spec}


def evictable_pod(
    r: Recorder,
    pods: str,
    name: str,
    phase: str | None = "Running",
    ready: bool = True,
    labels: dict[str, str] | None = None,
    node: str = EVICTION_NODE,
) -> None:
    """A pod bound to ``node`` whose status says ``phase`` (as its kubelet would write it);
    ``phase=None``: an unscheduled pod no scheduler takes."""
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox"}],
        "automountServiceAccountToken": False,
        "tolerations": TOLERATIONS,
    }
    if phase is None:
        spec["schedulerName"] = "nobody"
    else:
        spec["nodeName"] = node
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    r.send(Step("POST", pods, {"metadata": metadata, "spec": spec}), without_admission_fields)
    if phase is not None:
        status = {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
        r.send(
            Step("PATCH", f"{pods}/{name}/status", {"status": status}, MERGE),
            without_admission_fields,
        )


def budget(name: str, selected: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": selected}}, **spec},
    }


def test_eviction(backends):
    """The eviction subresource, as kubectl drain uses it: a running pod gets the
    DisruptionTarget condition and is deleted gracefully; pods not running are deleted at
    once; dry runs, delete options, preconditions, both Eviction versions, and the budgets
    whose status does not matter (an unready pod under AlwaysAllow, two budgets at once)."""

    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-eviction")
        pods = f"/api/v1/namespaces/{ns}/pods"
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": EVICTION_NODE}}
        r.send(Step("POST", "/api/v1/nodes", node), lambda n: n["metadata"]["name"])
        r.send(Step("POST", f"{pods}/missing/eviction", eviction("missing")))
        evictable_pod(r, pods, "a")
        r.send(Step("POST", f"{pods}/a/eviction", eviction("b")))  # another name
        r.send(Step("GET", f"{pods}/a/eviction"))
        r.send(Step("POST", f"{pods}/a/eviction", eviction("a"), query={"dryRun": "All"}))
        r.send(Step("GET", f"{pods}/a"), without_admission_fields)
        r.send(Step("POST", f"{pods}/a/eviction", eviction("a")))
        r.send(Step("GET", f"{pods}/a"), without_admission_fields)
        r.send(Step("POST", f"{pods}/a/eviction", eviction("a")))  # going already
        r.send(Step("GET", f"{pods}/a"), without_admission_fields)
        evictable_pod(r, pods, "pending", phase=None)
        r.send(Step("POST", f"{pods}/pending/eviction", eviction("pending")))
        r.send(Step("GET", f"{pods}/pending"))
        evictable_pod(r, pods, "done", phase="Succeeded")
        r.send(Step("POST", f"{pods}/done/eviction", eviction("done")))
        r.send(Step("GET", f"{pods}/done"))
        evictable_pod(r, pods, "now")
        r.send(Step("POST", f"{pods}/now/eviction", eviction("now", gracePeriodSeconds=0)))
        r.send(Step("GET", f"{pods}/now"))
        evictable_pod(r, pods, "dry")
        r.send(Step("POST", f"{pods}/dry/eviction", eviction("dry", dryRun=["All"])))
        r.send(Step("GET", f"{pods}/dry"), without_admission_fields)
        evictable_pod(r, pods, "beta")
        r.send(Step("POST", f"{pods}/beta/eviction", eviction("beta", "v1beta1")))
        r.send(Step("GET", f"{pods}/beta"), without_admission_fields)
        evictable_pod(r, pods, "stale")
        stale = {"resourceVersion": "1"}
        r.send(Step("POST", f"{pods}/stale/eviction", eviction("stale", preconditions=stale)))
        other = {"uid": "00000000-0000-4000-8000-000000000000"}
        r.send(Step("POST", f"{pods}/stale/eviction", eviction("stale", preconditions=other)))
        r.send(Step("GET", f"{pods}/stale"), without_admission_fields)
        budgets = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
        evictable_pod(r, pods, "unready", ready=False, labels={"app": "unready"})
        lenient = budget("lenient", "unready", unhealthyPodEvictionPolicy="AlwaysAllow")
        r.send(Step("POST", budgets, lenient), lambda b: b["spec"])
        r.send(Step("POST", f"{pods}/unready/eviction", eviction("unready")))
        r.send(Step("GET", f"{pods}/unready"), without_admission_fields)
        evictable_pod(r, pods, "twice", labels={"app": "twice"})
        for name in ("one", "two"):
            r.send(Step("POST", budgets, budget(name, "twice")), lambda b: b["spec"])
        r.send(Step("POST", f"{pods}/twice/eviction", eviction("twice")))
        r.send(Step("GET", f"{pods}/twice"), without_admission_fields)

    check(backends, sequence)


def settled_budget(healthy: int, allowed: int) -> Any:
    """A budget its controller has caught up with: ``healthy`` healthy pods, ``allowed``
    disruptions, no disrupted pod still counted."""

    def done(a: Answer) -> bool:
        status = a.body.get("status") or {} if a.ok() else {}
        return (
            status.get("observedGeneration") == a.body["metadata"]["generation"]
            and status.get("currentHealthy") == healthy
            and status.get("disruptionsAllowed") == allowed
            and not status.get("disruptedPods")
        )

    return done


def test_eviction_under_a_budget(backends):
    """A budget's status as the disruption controller writes it, and the evictions it allows
    and refuses: at its minimum, a 429 saying so; with a pod to spare, one eviction, after
    which the budget is at its minimum again."""

    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-budget")
        pods = f"/api/v1/namespaces/{ns}/pods"
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": BUDGET_NODE}}
        r.send(Step("POST", "/api/v1/nodes", node), lambda n: n["metadata"]["name"])
        evictable_pod(r, pods, "first", labels={"app": "guarded"}, node=BUDGET_NODE)
        budgets = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
        r.send(Step("POST", budgets, budget("strict", "guarded")), lambda b: b["spec"])
        r.until(Step("GET", f"{budgets}/strict"), settled_budget(1, 0), what="the budget counted")
        r.send(Step("POST", f"{pods}/first/eviction", eviction("first")))
        evictable_pod(r, pods, "second", labels={"app": "guarded"}, node=BUDGET_NODE)
        r.until(Step("GET", f"{budgets}/strict"), settled_budget(2, 1), what="a pod to spare")
        r.send(Step("POST", f"{pods}/first/eviction", eviction("first", dryRun=["All"])))
        r.send(Step("POST", f"{pods}/first/eviction", eviction("first")))
        r.send(Step("GET", f"{pods}/first"), without_admission_fields)
        r.until(Step("GET", f"{budgets}/strict"), settled_budget(1, 0), what="the budget spent")
        r.send(Step("POST", f"{pods}/second/eviction", eviction("second")))
        # a percentage counts the pods their controllers want: these have none, so none
        percent = budget("share", "guarded", minAvailable="50%")
        r.send(Step("POST", budgets, percent), lambda b: b["spec"])
        r.until(Step("GET", f"{budgets}/share"), settled_budget(1, 0), what="the share counted")
        # maxUnavailable counts the replicas the pods' Deployment wants
        web = deployment("web", 3)
        r.send(
            Step("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", web),
            lambda d: d["spec"]["replicas"],
        )
        spread = budget("spread", "web")
        spread["spec"] = {"maxUnavailable": 1, "selector": spread["spec"]["selector"]}
        r.send(Step("POST", budgets, spread), lambda b: b["spec"])
        r.until(
            Step("GET", f"{budgets}/spread"),
            lambda a: (
                (a.body.get("status") or {}).get("expectedPods") == 3
                and a.body["status"].get("observedGeneration") == 1
            ),
            what="the Deployment's replicas expected",
        )

    check(backends, sequence)


# -- garbage collection ---------------------------------------------------------------


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_garbage_collection(backends, policy):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, f"diff-gc-{policy.lower()}")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        owner = r.send(Step("POST", base, configmap("owner"))).body
        reference = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
        r.send(Step("POST", base, configmap("dependent", ownerReferences=[reference])))
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy}
        r.send(Step("DELETE", f"{base}/owner", body))
        r.until(Step("GET", f"{base}/owner"), lambda a: a.status == 404, what="the owner gone")
        if policy == "Orphan":
            r.until(
                Step("GET", f"{base}/dependent"),
                lambda a: a.ok() and not a.body["metadata"].get("ownerReferences"),
                what="the orphaned dependent",
            )
        else:
            r.until(
                Step("GET", f"{base}/dependent"),
                lambda a: a.status == 404,
                what="the dependent gone",
            )

    check(backends, sequence)


# -- RBAC -----------------------------------------------------------------------------


def test_rbac_denials_for_a_service_account(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-rbac")
        r.send(Step("POST", f"/api/v1/namespaces/{ns}/configmaps", configmap("readable")))
        r.send(
            Step(
                "POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": "reader"}}
            )
        )
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "get-configmaps"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        }
        r.send(Step("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", role))
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "get-configmaps",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
        }
        r.send(
            Step(
                "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", binding
            )
        )
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        token = r.backend.send(
            Step("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/reader/token", request)
        )
        assert token.status == 201, token.body
        r.backend.add_identity("reader", token.body["status"]["token"])
        as_reader = {"as_user": "reader"}
        r.until(
            Step("GET", f"/api/v1/namespaces/{ns}/configmaps/readable", **as_reader),
            Answer.ok,
            what="the reader's RBAC",
        )
        r.send(Step("GET", f"/api/v1/namespaces/{ns}/configmaps", **as_reader))
        r.send(Step("POST", f"/api/v1/namespaces/{ns}/configmaps", configmap("x"), **as_reader))
        r.send(Step("DELETE", f"/api/v1/namespaces/{ns}/configmaps/readable", **as_reader))
        r.send(Step("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", **as_reader))
        r.send(Step("GET", "/api/v1/configmaps", **as_reader))
        r.send(Step("GET", f"/api/v1/namespaces/{ns}/secrets/none", **as_reader))
        r.send(Step("GET", f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs", **as_reader))
        r.send(Step("GET", "/api/v1/nodes", **as_reader))
        r.send(Step("GET", f"/api/v1/namespaces/{ns}/configmaps/readable", as_user="nobody"))
        r.backend.add_identity("forged", "not-a-token")
        r.send(Step("GET", f"/api/v1/namespaces/{ns}/configmaps/readable", as_user="forged"))

    check(backends, sequence)


# -- the documented differences ---------------------------------------------------------


DUPLICATE = (
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}'
)


def duplicate_field(r: Recorder) -> None:
    ns = namespace(r, "diff-duplicate")
    for mode in ("Strict", "Warn"):
        r.send(
            Step(
                "POST",
                f"/api/v1/namespaces/{ns}/configmaps",
                DUPLICATE,
                query={"fieldValidation": mode},
            )
        )


def apply_conflict(r: Recorder) -> None:
    ns = namespace(r, "diff-conflict")
    path = f"/api/v1/namespaces/{ns}/configmaps/c"
    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"a": "1"},
    }
    r.send(Step("PATCH", path, applied, APPLY, query={"fieldManager": "one"}))
    r.send(
        Step("PATCH", path, {**applied, "data": {"a": "2"}}, APPLY, query={"fieldManager": "two"})
    )


def label_selector_syntax(r: Recorder) -> None:
    ns = namespace(r, "diff-label-syntax")
    for selector in ("tier in (a", "!!bad"):
        r.send(
            Step("GET", f"/api/v1/namespaces/{ns}/configmaps", query={"labelSelector": selector})
        )


def test_a_pod_naming_a_missing_priority_class_is_refused(backends):
    """The part of the Priority admission plugin the emulator plays (D192): the 403."""

    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-priority")
        pod = {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c", "image": "busybox"}],
                "automountServiceAccountToken": False,
                "priorityClassName": "diff-nosuch",
            },
        }
        r.send(Step("POST", f"/api/v1/namespaces/{ns}/pods", pod))

    check(backends, sequence)


def admission_defaults(r: Recorder) -> None:
    ns = namespace(r, "diff-admission")
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "automountServiceAccountToken": False,
        },
    }
    r.send(Step("POST", f"/api/v1/namespaces/{ns}/pods", pod))


def custom_controller_scale(r: Recorder) -> None:
    """A budget taken as a percentage of pods whose controller is neither a ReplicaSet, a
    Deployment nor a StatefulSet: kube-controller-manager asks the controller's scale
    subresource (and names the resource that has none), the emulator's controller does not."""
    ns = namespace(r, "diff-budget-scale")
    owner = r.send(Step("POST", f"/api/v1/namespaces/{ns}/configmaps", configmap("owner"))).body
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    pod = {
        "metadata": {"name": "owned", "labels": {"app": "owned"}, "ownerReferences": [ref]},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "schedulerName": "nobody"},
    }
    r.send(Step("POST", f"/api/v1/namespaces/{ns}/pods", pod), lambda p: p["metadata"]["name"])
    budgets = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    r.send(Step("POST", budgets, budget("share", "owned", minAvailable="50%")), lambda b: b["spec"])
    r.until(
        Step("GET", f"{budgets}/share"),
        lambda a: any(
            c.get("reason") == "SyncFailed"
            for c in (a.body.get("status") or {}).get("conditions") or []
        ),
        what="the budget failing to count",
    )


@pytest.mark.parametrize(
    "sequence",
    [
        pytest.param(custom_controller_scale, id="D106-custom-controller-scale"),
        pytest.param(duplicate_field, id="D193-duplicate-fields"),
        pytest.param(apply_conflict, id="D190-apply-conflicts"),
        pytest.param(admission_defaults, id="D192-priority-and-toleration-admission"),
        pytest.param(label_selector_syntax, id="D196-label-selector-syntax-messages"),
    ],
)
@pytest.mark.xfail(strict=True, reason="a documented difference (docs/emulator-differences.md)")
def test_documented_differences_still_differ(backends, sequence):
    """Each documented difference, shown: when the emulator stops differing, this passes,
    strict xfail fails it, and the entry in docs/emulator-differences.md is due for removal."""
    check(backends, sequence)


# -- selectors, secrets, namespaces ------------------------------------------------------


def test_selectors_and_secrets(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-select")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        r.send(Step("POST", base, configmap("s1", labels={"tier": "a"} | LABEL)))
        r.send(Step("GET", base, query={"labelSelector": "tier in (a,b)"}))
        r.send(Step("GET", base, query={"fieldSelector": "metadata.name=s1"}))
        r.send(Step("GET", base, query={"fieldSelector": "data.a=1"}))
        r.send(Step("GET", base, query={"fieldSelector": "metadata.name"}))
        secrets = f"/api/v1/namespaces/{ns}/secrets"
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "sec"},
            "stringData": {"k": "v"},
        }
        r.send(Step("POST", secrets, secret))
        r.send(
            Step(
                "POST",
                secrets,
                {**secret, "metadata": {"name": "bad"}, "data": {"k": "not base64!"}},
            )
        )
        r.send(
            Step(
                "POST",
                secrets,
                {**secret, "metadata": {"name": "typed"}, "type": "kubernetes.io/tls"},
            )
        )
        r.send(Step("PUT", f"{secrets}/sec", {**secret, "type": "Other"}))

    check(backends, sequence)


def test_namespace_deletion(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-ns-delete")
        cms = f"/api/v1/namespaces/{ns}/configmaps"
        # a finalizer holds the namespace in Terminating until the sequence lets it go
        r.send(Step("POST", cms, configmap("inside", finalizers=["example.com/hold"])))
        r.send(Step("DELETE", f"/api/v1/namespaces/{ns}"))
        r.send(Step("POST", cms, configmap("late")))
        r.until(
            Step("GET", f"{cms}/inside"),
            lambda a: a.ok() and a.body["metadata"].get("deletionTimestamp"),
            what="the held configmap deleting",
        )
        r.send(Step("PATCH", f"{cms}/inside", {"metadata": {"finalizers": None}}, MERGE))
        r.until(
            Step("GET", f"/api/v1/namespaces/{ns}"),
            lambda a: a.status == 404,
            what="the namespace gone",
        )
        r.send(Step("DELETE", "/api/v1/namespaces/default"))
        r.send(
            Step("DELETE", "/api/v1/namespaces/kube-system", query={"dryRun": "All"}),
            lambda n: {"kind": n["kind"]},
        )

    check(backends, sequence)


def test_foreground_deletion_while_blocked(backends):
    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-fg")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        owner = r.send(Step("POST", base, configmap("owner"))).body
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
        r.send(
            Step(
                "POST",
                base,
                configmap("dep", ownerReferences=[ref], finalizers=["example.com/hold"]),
            )
        )
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}
        r.send(Step("DELETE", f"{base}/owner", body))
        r.until(
            Step("GET", f"{base}/dep"),
            lambda a: a.ok() and a.body["metadata"].get("deletionTimestamp"),
            what="the dependent deleting",
        )
        r.send(Step("GET", f"{base}/owner"))
        r.send(Step("PATCH", f"{base}/dep", {"metadata": {"finalizers": None}}, MERGE))
        r.until(Step("GET", f"{base}/owner"), lambda a: a.status == 404, what="the owner gone")

    check(backends, sequence)


def test_an_object_past_etcds_request_limit_is_refused(backends):
    """etcd refuses a write over its request limit (1.5 MiB by default) and kube-apiserver
    answers it as an internal error; an object just under it is stored."""

    def job_with_args(name: str, size: int) -> dict[str, Any]:
        job = tfjob(name)
        worker = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
        worker["args"] = ["x" * size]
        return job

    def sequence(r: Recorder) -> None:
        ns = namespace(r, "diff-size")
        base = f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
        refused = r.send(Step("POST", base, job_with_args("big", 1_600_000)))
        assert refused.status == 500 and "request is too large" in str(refused.body)
        assert r.send(Step("GET", f"{base}/big")).status == 404
        assert r.send(Step("POST", base, job_with_args("under", 1_000_000))).status == 201

    check(backends, sequence)
