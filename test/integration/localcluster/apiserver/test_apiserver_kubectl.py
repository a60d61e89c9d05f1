"""The real kubectl (the image's 1.32 dispatcher) against the emulator."""

from __future__ import annotations

import json
import subprocess
import threading

import pytest
import yaml

pytestmark = pytest.mark.integration

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web, tier: front}}
spec:
  containers:
  - name: main
    image: {image}
    env: [{{name: A, value: "1"}}, {{name: B, value: "{b}"}}]
"""

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tfjobs.kubeflow.org
spec:
  group: kubeflow.org
  scope: Namespaced
  names: {plural: tfjobs, singular: tfjob, kind: TFJob, shortNames: [tfj]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 1, default: 1}
            x-kubernetes-preserve-unknown-fields: true
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

TFJOB = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist}
spec: {replicas: 2}
"""


def pod(name: str = "web", image: str = "nginx:1.25", b: str = "2") -> str:
    return POD.format(name=name, image=image, b=b)


def test_version_and_api_resources(kubectl):
    out = kubectl("version", "-o", "json").stdout
    assert json.loads(out)["serverVersion"]["minor"] == "32"
    out = kubectl("api-resources").stdout
    for needle in (
        "pods",
        "customresourcedefinitions",
        "leases",
        "poddisruptionbudgets",
        "deployments",
    ):
        assert needle in out


def test_create_get_describe_delete(kubectl, apiserver):
    assert kubectl("create", "-f", "-", input=pod()).stdout.strip() == "pod/web created"
    again = kubectl("create", "-f", "-", input=pod(), check=False)
    assert again.returncode != 0 and "AlreadyExists" in again.stderr
    out = kubectl("get", "pods").stdout
    assert out.split("\n")[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "Pending" in out
    wide = kubectl("get", "pods", "-o", "wide").stdout
    assert "NODE" in wide and "NOMINATED NODE" in wide
    doc = yaml.safe_load(kubectl("get", "pod", "web", "-o", "yaml").stdout)
    assert doc["kind"] == "Pod" and doc["metadata"]["uid"]
    assert "Name:         web" in kubectl("describe", "pod", "web").stdout
    assert "NotFound" in kubectl("get", "pod", "nope", check=False).stderr
    assert kubectl("delete", "pod", "web").stdout.strip() == 'pod "web" deleted'
    assert "NotFound" in kubectl("delete", "pod", "web", check=False).stderr


def test_apply_twice_is_unchanged_then_configured(kubectl, apiserver):
    assert "created" in kubectl("apply", "-f", "-", input=pod("applied")).stdout
    rv = apiserver.registry.resource_version
    assert (
        kubectl("apply", "-f", "-", input=pod("applied")).stdout.strip() == "pod/applied unchanged"
    )
    assert apiserver.registry.resource_version == rv
    out = kubectl("apply", "-f", "-", input=pod("applied", "nginx:1.26", "3")).stdout
    assert "configured" in out
    obj = apiserver.registry.get(("", "v1", "pods"), "default", "applied")
    container = obj["spec"]["containers"][0]
    assert container["image"] == "nginx:1.26"
    assert container["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]


def test_server_side_apply_and_dry_run(kubectl, apiserver):
    assert (
        "serverside-applied"
        in kubectl("apply", "--server-side", "-f", "-", input=pod("ssa")).stdout
    )
    kubectl(
        "apply",
        "--server-side",
        "-f",
        "-",
        input=pod("ssa", "nginx:2").replace(", tier: front", ""),
    )
    live = apiserver.registry.get(("", "v1", "pods"), "default", "ssa")
    assert live["spec"]["containers"][0]["image"] == "nginx:2"
    assert live["metadata"]["labels"] == {"app": "web"}  # the label the manifest dropped is gone
    out = kubectl("create", "-f", "-", "--dry-run=server", "-o", "yaml", input=pod("dry")).stdout
    assert yaml.safe_load(out)["metadata"]["name"] == "dry"
    assert "NotFound" in kubectl("get", "pod", "dry", check=False).stderr


def test_patch_types_and_label(kubectl, apiserver):
    kubectl("create", "-f", "-", input=pod())
    kubectl("patch", "pod", "web", "--type=merge", "-p", '{"metadata":{"annotations":{"x":"y"}}}')
    kubectl(
        "patch", "pod", "web", "-p", '{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}'
    )
    kubectl(
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/labels/j","value":"k"}]',
    )
    kubectl("label", "pod", "web", "color=blue")
    kubectl("label", "pod", "web", "color=red", "--overwrite")
    obj = apiserver.registry.get(("", "v1", "pods"), "default", "web")
    assert obj["metadata"]["annotations"] == {"x": "y"}
    assert (
        obj["spec"]["containers"][0]["image"] == "nginx:2"
        and len(obj["spec"]["containers"][0]["env"]) == 2
    )
    assert obj["metadata"]["labels"] == {"app": "web", "tier": "front", "j": "k", "color": "red"}
    kubectl("label", "pod", "web", "color-")
    assert (
        "color"
        not in apiserver.registry.get(("", "v1", "pods"), "default", "web")["metadata"]["labels"]
    )


def test_selectors(kubectl):
    kubectl("create", "-f", "-", input=pod("a"))
    kubectl("create", "-f", "-", input=pod("b").replace("app: web", "app: db"))
    names = lambda out: sorted(line.split("/")[1] for line in out.split())  # noqa: E731
    assert names(kubectl("get", "pods", "-l", "app=web", "-o", "name").stdout) == ["a"]
    assert names(kubectl("get", "pods", "-l", "app in (web,db),tier!=x", "-o", "name").stdout) == [
        "a",
        "b",
    ]
    assert names(kubectl("get", "pods", "-l", "app notin (web)", "-o", "name").stdout) == ["b"]
    out = kubectl(
        "get", "pods", "--field-selector", "status.phase=Pending,metadata.name=b", "-o", "name"
    ).stdout
    assert names(out) == ["b"]
    assert names(kubectl("get", "pods", "--chunk-size=1", "-o", "name").stdout) == ["a", "b"]
    assert "NAMESPACE" in kubectl("get", "pods", "-A").stdout


def test_get_watch_prints_new_rows(kubectl, apiserver):
    kubectl("create", "-f", "-", input=pod("first"))
    env = {"HOME": str(kubectl.home), "KUBECONFIG": str(kubectl.config)}
    proc = subprocess.Popen(
        ["/usr/bin/kubectl", "get", "pods", "-w", "--request-timeout=20s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines: list[str] = []
    seen_second = threading.Event()

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("second"):
                seen_second.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # the watch starts after the list; create until the watcher shows the new pod
        created = False
        for _ in range(100):
            if not created and any(line.startswith("first") for line in lines):
                apiserver.registry.create(
                    ("", "v1", "pods"),
                    "default",
                    {
                        "metadata": {"name": "second"},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                )
                created = True
            if seen_second.wait(0.1):
                break
        assert seen_second.is_set(), lines
        assert lines[0].split()[:2] == ["NAME", "READY"]
    finally:
        proc.kill()
        proc.wait()


def test_crd_and_custom_resources(kubectl, apiserver):
    assert "created" in kubectl("apply", "-f", "-", input=CRD).stdout
    assert "No resources found" in kubectl("get", "tfjobs").stderr
    assert "created" in kubectl("create", "-f", "-", input=TFJOB).stdout
    out = kubectl("get", "tfjobs").stdout
    assert out.split("\n")[0].split() == ["NAME", "REPLICAS", "AGE"] and "mnist" in out
    doc = yaml.safe_load(kubectl("get", "tfj", "mnist", "-o", "yaml").stdout)
    assert doc["spec"]["replicas"] == 2 and doc["metadata"]["generation"] == 1
    assert (
        "configured"
        in kubectl("apply", "-f", "-", input=TFJOB.replace("replicas: 2", "replicas: 3")).stdout
    )
    bad = kubectl("patch", "tfjob", "mnist", "-p", '{"spec":{"replicas":4}}', check=False)
    assert bad.returncode != 0
    # kubectl names the patch type and the kind itself; the server only lists what it takes
    assert bad.stderr.strip() == (
        "error: application/strategic-merge-patch+json is not supported by kubeflow.org/v1, "
        "Kind=TFJob: the body of the request was in an unknown format - accepted media types "
        "include: application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml"
    )
    invalid = kubectl(
        "apply",
        "-f",
        "-",
        input=TFJOB.replace("mnist", "bad").replace("replicas: 2", "replicas: 0"),
        check=False,
    )
    assert invalid.returncode != 0 and "spec.replicas" in invalid.stderr
    typo = kubectl(
        "create",
        "-f",
        "-",
        input=TFJOB.replace("mnist", "typo").replace("{replicas: 2}", "{replicas: 2}\nbogus: 1"),
        check=False,
    )
    assert typo.returncode != 0 and 'unknown field "bogus"' in typo.stderr
    kubectl("label", "tfjob", "mnist", "a=b")
    assert (
        kubectl("get", "tfjobs", "-l", "a=b", "-o", "name").stdout.strip()
        == "tfjob.kubeflow.org/mnist"
    )
    kubectl("delete", "crd", "tfjobs.kubeflow.org")
    gone = kubectl("get", "tfjobs", check=False)
    assert gone.returncode != 0


def test_delete_with_finalizer_waits_for_removal(kubectl, apiserver):
    apiserver.registry.create(
        ("", "v1", "configmaps"),
        "default",
        {"metadata": {"name": "fin", "finalizers": ["example.com/x"]}},
    )
    proc = subprocess.Popen(
        ["/usr/bin/kubectl", "delete", "configmap", "fin", "--timeout=20s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"HOME": str(kubectl.home), "KUBECONFIG": str(kubectl.config)},
    )  # fmt: skip
    try:
        for _ in range(200):
            obj = apiserver.registry.get(("", "v1", "configmaps"), "default", "fin")
            if obj["metadata"].get("deletionTimestamp") and apiserver.registry.watch_count():
                break
            threading.Event().wait(0.05)
        apiserver.registry.patch(
            ("", "v1", "configmaps"), "default", "fin", {"metadata": {"finalizers": None}}, "merge"
        )
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert 'configmap "fin" deleted' in out
    finally:
        proc.kill()


def test_events_and_describe(kubectl, apiserver):
    kubectl("create", "-f", "-", input=pod())
    uid = apiserver.registry.get(("", "v1", "pods"), "default", "web")["metadata"]["uid"]
    apiserver.registry.create(
        ("", "v1", "events"), "default",
        {
            "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "uid": uid},
            "reason": "Scheduled", "message": "assigned somewhere", "type": "Normal", "count": 1,
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        },
    )  # fmt: skip
    assert "assigned somewhere" in kubectl("describe", "pod", "web").stdout
    assert "Scheduled" in kubectl("get", "events").stdout


def test_namespace_lifecycle_and_cascades(kubectl, apiserver):
    reg = apiserver.registry
    kubectl("create", "namespace", "scratch")
    kubectl("create", "configmap", "owner", "-n", "scratch")
    owner = reg.get(("", "v1", "configmaps"), "scratch", "owner")
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": True,
    }
    for name in ("dep1", "dep2"):
        reg.create(
            ("", "v1", "configmaps"),
            "scratch",
            {"metadata": {"name": name, "ownerReferences": [ref]}},
        )
    kubectl("delete", "configmap", "owner", "-n", "scratch", "--cascade=orphan")
    assert reg.gc.wait_idle()
    deps = reg.list(("", "v1", "configmaps"), "scratch")[0]
    assert sorted(d["metadata"]["name"] for d in deps) == ["dep1", "dep2"]
    assert all("ownerReferences" not in d["metadata"] for d in deps)
    kubectl("create", "configmap", "owner2", "-n", "scratch")
    ref["uid"] = reg.get(("", "v1", "configmaps"), "scratch", "owner2")["metadata"]["uid"]
    reg.patch(
        ("", "v1", "configmaps"),
        "scratch",
        "dep1",
        {"metadata": {"ownerReferences": [ref]}},
        "merge",
    )
    kubectl("delete", "configmap", "owner2", "-n", "scratch", "--cascade=foreground")
    assert reg.gc.wait_idle()
    assert [d["metadata"]["name"] for d in reg.list(("", "v1", "configmaps"), "scratch")[0]] == [
        "dep2"
    ]
    assert (
        'namespace "scratch" deleted'
        in kubectl("delete", "namespace", "scratch", "--timeout=20s").stdout
    )
    assert "NotFound" in kubectl("get", "namespace", "scratch", check=False).stderr


def test_scale(kubectl, apiserver):
    deploy = ("apps", "v1", "deployments")
    apiserver.registry.create(
        deploy,
        "default",
        {
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
    )
    assert "scaled" in kubectl("scale", "deployment", "d", "--replicas=4").stdout
    assert apiserver.registry.get(deploy, "default", "d")["spec"]["replicas"] == 4


def test_create_generators_send_protobuf(kubectl, apiserver):
    """``kubectl create <kind>`` sends protobuf bodies; these kinds are decoded."""
    reg = apiserver.registry
    kubectl("create", "namespace", "gen")
    kubectl("create", "configmap", "c", "-n", "gen", "--from-literal=a=b")
    kubectl("create", "secret", "generic", "s", "-n", "gen", "--from-literal=a=b")
    kubectl(
        "create", "deployment", "d", "-n", "gen", "--image=nginx:1.25", "--replicas=2", "--port=80"
    )
    kubectl("create", "job", "j", "-n", "gen", "--image=busybox", "--", "echo", "hi")
    kubectl("create", "service", "nodeport", "np", "-n", "gen", "--tcp=80:http")
    assert reg.get(("", "v1", "configmaps"), "gen", "c")["data"] == {"a": "b"}
    assert reg.get(("", "v1", "secrets"), "gen", "s")["data"] == {"a": "Yg=="}
    d = reg.get(("apps", "v1", "deployments"), "gen", "d")
    assert d["spec"]["replicas"] == 2 and d["spec"]["selector"] == {"matchLabels": {"app": "d"}}
    ports = d["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "protocol": "TCP"}]  # template defaulted
    job = reg.get(("batch", "v1", "jobs"), "gen", "j")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    port = reg.get(("", "v1", "services"), "gen", "np")["spec"]["ports"][0]
    assert port["targetPort"] == "http" and 30000 <= port["nodePort"] <= 32767
