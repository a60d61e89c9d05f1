"""The kustomize overlays render, and every rendered object is a valid Kubernetes object."""

import os
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from support.kustomize import combined_kustomization

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "manifests"
OVERLAYS = [
    "standalone",
    "gang-kube-batch",
    "gang-volcano",
    "gang-scheduler-plugins",
    "gang-kubernetes",
    "namespaced",
    "pytorchjob",
    "xgboostjob",
    "jaxjob",
    "paddlejob",
    "all-kinds",
]
# The kubectl on these machines (1.32) and the newest schema the validator ships.
K8S_VERSIONS = ["1.32.0", kubernetes_validate.latest_version()]
OPERATOR = "tf-job-operator"

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")


def render(target: Path, tmp_path_factory) -> list[dict]:
    home = tmp_path_factory.mktemp("home")
    out = subprocess.run(
        ["kubectl", "kustomize", str(target)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, list[dict]]:
    return {name: render(MANIFESTS / "overlays" / name, tmp_path_factory) for name in OVERLAYS}


def by_kind(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def render_combined(
    overlay: str, component: str, tmp_path_factory, namespace: str | None = None
) -> list[dict]:
    """An overlay with a component added by a user's own kustomization."""
    target = tmp_path_factory.mktemp(f"{overlay}-{component}")
    combined_kustomization(target, overlay, component, namespace=namespace)
    return render(target, tmp_path_factory)


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates(rendered, overlay, version):
    objs = rendered[overlay]
    assert objs
    for obj in objs:
        kubernetes_validate.validate(obj, version, strict=True)


def test_standalone_contents(rendered):
    objs = rendered["standalone"]
    kinds = sorted(o["kind"] for o in objs)
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Deployment",
        "Namespace",
        "Service",
        "ServiceAccount",
    ]
    for obj in objs:
        cluster_scoped = (
            "Namespace",
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
        )
        if obj["kind"] not in cluster_scoped:
            assert obj["metadata"]["namespace"] == "kubeflow"


def test_deployment_runs_operator_with_probes_and_env(rendered):
    (deploy,) = by_kind(rendered["standalone"], "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "tf-job-operator"
    (container,) = pod["containers"]
    assert container["command"] == ["tf-operator"]
    assert "--monitoring-port=8443" in container["args"]
    assert not any("gang" in a for a in container["args"])
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert container["livenessProbe"]["httpGet"]["port"] in ports
    env = {e["name"]: e for e in container["env"]}
    assert env["KUBEFLOW_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert container["image"] == "kubeflow/tf-operator-py:v0.5.3.post1"


def test_scheduler_plugins_args_parse_with_the_real_cli(rendered):
    from tf_operator.app import main as app_main

    (deploy,) = by_kind(rendered["gang-scheduler-plugins"], "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    ctx = app_main.cli.make_context("tf-operator", app_main.normalize_go_args(args))
    opt = app_main.options_from_params(ctx.params)
    assert opt.enable_gang_scheduling and opt.gang_scheduler_name == "scheduler-plugins"
    assert opt.validate() == []


def test_deployment_args_parse_with_the_real_cli(rendered):
    from tf_operator.app import main as app_main

    (deploy,) = by_kind(rendered["gang-volcano"], "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    ctx = app_main.cli.make_context("tf-operator", app_main.normalize_go_args(args))
    opt = app_main.options_from_params(ctx.params)
    assert opt.enable_gang_scheduling and opt.gang_scheduler_name == "volcano"
    assert opt.monitoring_port == 8443


def test_metrics_service_is_scrapable(rendered):
    (svc,) = by_kind(rendered["standalone"], "Service")
    ann = svc["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true"
    assert ann["prometheus.io/path"] == "/metrics"
    assert ann["prometheus.io/port"] == str(svc["spec"]["ports"][0]["port"])
    (deploy,) = by_kind(rendered["standalone"], "Deployment")
    assert (
        svc["spec"]["selector"].items() <= deploy["spec"]["template"]["metadata"]["labels"].items()
    )


def _triples(role: dict) -> set[tuple[str, str, str]]:
    return {
        (group, res, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for res in rule["resources"]
        for verb in rule["verbs"]
    }


def _rules(objs):
    (role,) = by_kind(objs, "ClusterRole")
    return _triples(role)


def test_cluster_role_grants_what_the_operator_uses(rendered):
    grants = _rules(rendered["standalone"])
    needed = {("kubeflow.org", "tfjobs", v) for v in ("get", "list", "watch", "delete")} | {
        ("kubeflow.org", "tfjobs/status", "update")
    }
    for res in ("pods", "services"):
        needed |= {("", res, v) for v in ("list", "watch", "create", "delete", "patch")}
    needed |= {("", "events", "create"), ("", "events", "patch")}
    needed |= {("", "endpoints", v) for v in ("get", "create", "update")}
    needed |= {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")}
    assert needed == grants  # nothing more than the code uses
    assert not any(g[1] == "podgroups" for g in grants)
    assert not any("*" in g for g in grants)
    (binding,) = by_kind(rendered["standalone"], "ClusterRoleBinding")
    assert binding["subjects"][0] == {
        "kind": "ServiceAccount",
        "name": "tf-job-operator",
        "namespace": "kubeflow",
    }


@pytest.mark.parametrize("overlay", [o for o in OVERLAYS if o != "namespaced"])
def test_a_cluster_wide_install_moved_to_another_namespace_binds_its_service_account_there(
    overlay, tmp_path_factory
):
    """A user's kustomization that installs a shipped overlay in ``ml``: every binding names the
    ServiceAccount where it now runs (a subject naming ``kubeflow`` would grant it nothing)."""
    target = tmp_path_factory.mktemp(f"moved-{overlay}")
    objs = render(combined_kustomization(target, overlay, namespace="ml"), tmp_path_factory)
    (account,) = by_kind(objs, "ServiceAccount")
    assert account["metadata"]["namespace"] == "ml"
    bindings = by_kind(objs, "ClusterRoleBinding") + by_kind(objs, "RoleBinding")
    subjects = [s for b in bindings for s in b["subjects"] if s["name"] == OPERATOR]
    assert subjects and all(s["namespace"] == "ml" for s in subjects)


def test_the_pytorchjob_component_adds_the_kind(rendered):
    from tf_operator.app import main as app_main

    objs = rendered["pytorchjob"]
    crds = {o["metadata"]["name"] for o in by_kind(objs, "CustomResourceDefinition")}
    assert crds == {"tfjobs.kubeflow.org", "pytorchjobs.kubeflow.org"}
    grants = _rules(objs) - _rules(rendered["standalone"])
    assert grants == {
        ("kubeflow.org", "pytorchjobs", v) for v in ("get", "list", "watch", "delete")
    } | {("kubeflow.org", "pytorchjobs/status", "update")}
    (deploy,) = by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    ctx = app_main.cli.make_context("tf-operator", app_main.normalize_go_args(args))
    assert app_main.options_from_params(ctx.params).enable_scheme == ("tfjob", "pytorchjob")


def test_the_pytorchjob_component_grants_in_the_namespaced_role_too(rendered, tmp_path_factory):
    """Namespaced overlay + PyTorchJob component: the Role (there is no ClusterRole) gets the
    PyTorchJob rules, as the ClusterRole does without the overlay."""
    objs = render_combined("namespaced", "pytorchjob", tmp_path_factory)
    assert not by_kind(objs, "ClusterRole")
    (role,) = by_kind(objs, "Role")
    assert _rules([{**role, "kind": "ClusterRole"}]) == _rules(rendered["pytorchjob"])


@pytest.mark.parametrize("kind", ["xgboostjob", "jaxjob", "paddlejob"])
def test_each_v1_9_kinds_component_adds_the_kind(rendered, kind, tmp_path_factory):
    from tf_operator.app import main as app_main

    objs = rendered[kind]
    crds = {o["metadata"]["name"] for o in by_kind(objs, "CustomResourceDefinition")}
    assert crds == {"tfjobs.kubeflow.org", f"{kind}s.kubeflow.org"}
    grants = _rules(objs) - _rules(rendered["standalone"])
    assert grants == {
        ("kubeflow.org", f"{kind}s", v) for v in ("get", "list", "watch", "delete")
    } | {("kubeflow.org", f"{kind}s/status", "update")}
    (deploy,) = by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    ctx = app_main.cli.make_context("tf-operator", app_main.normalize_go_args(args))
    assert app_main.options_from_params(ctx.params).enable_scheme == ("tfjob", kind)
    (role,) = by_kind(render_combined("namespaced", kind, tmp_path_factory), "Role")
    assert _rules([{**role, "kind": "ClusterRole"}]) == _rules(objs)


def test_the_all_kinds_overlay_runs_every_kind(rendered):
    from tf_operator.app import main as app_main
    from tf_operator.controller.v1.registry import SCHEMES, enabled_schemes

    objs = rendered["all-kinds"]
    crds = {o["metadata"]["name"] for o in by_kind(objs, "CustomResourceDefinition")}
    assert crds == {s.crd_name for s in SCHEMES.values()}
    (deploy,) = by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    ctx = app_main.cli.make_context("tf-operator", app_main.normalize_go_args(args))
    enabled = enabled_schemes(app_main.options_from_params(ctx.params).enable_scheme)
    assert [s.name for s in enabled] == list(SCHEMES)


@pytest.mark.parametrize(
    ("overlay", "group", "scheduler"),
    [
        ("gang-kube-batch", "scheduling.incubator.k8s.io", "kube-batch"),
        ("gang-volcano", "scheduling.volcano.sh", "volcano"),
        ("gang-scheduler-plugins", "scheduling.x-k8s.io", "scheduler-plugins"),
    ],
)
def test_gang_overlays_add_podgroups(rendered, overlay, group, scheduler):
    objs = rendered[overlay]
    crds = {o["metadata"]["name"] for o in by_kind(objs, "CustomResourceDefinition")}
    queues = {f"queues.{group}"} if scheduler == "kube-batch" else set()
    assert crds == {"tfjobs.kubeflow.org", f"podgroups.{group}"} | queues
    (deploy,) = by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--enable-gang-scheduling=true" in args
    assert f"--gang-scheduler-name={scheduler}" in args


def test_the_kubernetes_gang_overlay_installs_nothing_beside_the_cluster(rendered):
    """Kubernetes' own gang scheduling needs no CRD and no scheduler: only the flags."""
    objs = rendered["gang-kubernetes"]
    crds = {o["metadata"]["name"] for o in by_kind(objs, "CustomResourceDefinition")}
    assert crds == {"tfjobs.kubeflow.org"}
    (deploy,) = by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--enable-gang-scheduling=true" in args
    assert "--gang-scheduler-name=kubernetes" in args


def operator_grants(objs: list[dict]) -> tuple[set, set]:
    """What the operator's ServiceAccount may do (group, resource, verb): cluster-wide (through
    ClusterRoleBindings) and in its own namespace (RoleBindings), following the bindings that
    name it to the roles they refer to, as the RBAC authorizer does."""
    (account,) = by_kind(objs, "ServiceAccount")
    namespace = account["metadata"]["namespace"]
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"]}
    roles = {(o["kind"], o["metadata"]["name"]): o for o in objs if o["kind"].endswith("Role")}
    cluster_wide: set = set()
    namespaced: set = set()
    for binding in by_kind(objs, "ClusterRoleBinding") + by_kind(objs, "RoleBinding"):
        if {**subject, "namespace": namespace} not in binding["subjects"]:
            continue
        ref = binding["roleRef"]
        grants = _triples(roles[(ref["kind"], ref["name"])])
        if binding["kind"] == "ClusterRoleBinding":
            cluster_wide |= grants
        else:
            assert binding["metadata"]["namespace"] == namespace
            namespaced |= grants
    return cluster_wide, namespaced


GANG_COMPONENTS = {
    "gang-kube-batch": "kube-batch",
    "gang-volcano": "volcano",
    "gang-scheduler-plugins": "scheduler-plugins",
    "gang-kubernetes": "kubernetes",
}


def gang_needs(scheduler: str) -> tuple[set, set]:
    """What the gang code calls for ``scheduler``: the PodGroups it owns (read, informer,
    create, resize, delete) and the cluster-scoped PriorityClasses it reads by name when the
    backend computes minResources."""
    from tf_operator.control.podgroup_control import backend_for
    from tf_operator.control.workload_control import KUBERNETES_BACKEND, WORKLOADS
    from tf_operator.k8s.client import PRIORITY_CLASSES

    backend = KUBERNETES_BACKEND if scheduler == "kubernetes" else backend_for(scheduler)
    groups = backend.pod_groups
    verbs = ("get", "list", "watch", "create", "patch", "delete")
    podgroups = {(groups.group, groups.plural, verb) for verb in verbs}
    if backend is KUBERNETES_BACKEND:  # its Workloads are read by name, never listed
        podgroups |= {
            (WORKLOADS.group, WORKLOADS.plural, v) for v in ("get", "create", "patch", "delete")
        }
    reads = set()
    if backend.computes_min_resources:
        reads = {(PRIORITY_CLASSES.group, PRIORITY_CLASSES.plural, "get")}
    if backend.queues is not None:  # a missing queue is looked up by name (D157)
        reads |= {(backend.queues.group, backend.queues.plural, "get")}
        assert not backend.queues.namespaced
    assert groups.namespaced and not PRIORITY_CLASSES.namespaced
    return podgroups, reads


@pytest.mark.parametrize("component", list(GANG_COMPONENTS))
@pytest.mark.parametrize("install", ["cluster-wide", "namespaced", "namespaced-elsewhere"])
def test_gang_component_grants_the_operator_what_the_gang_code_calls(
    rendered, tmp_path_factory, component, install
):
    """Each gang component, with the cluster-wide install or the namespaced overlay (also moved
    to another namespace), gives the operator's ServiceAccount every verb the gang code uses:
    PodGroups where its own role grants (the ClusterRole, or the namespaced overlay's Role) and
    the cluster-scoped PriorityClass reads, which a Role cannot grant, through a ClusterRole of
    their own; nothing else cluster-wide when namespaced."""
    podgroups, reads = gang_needs(GANG_COMPONENTS[component])
    assert {verb for _, _, verb in reads} <= {"get", "list", "watch"}
    if install == "cluster-wide":
        objs = rendered[component]
        base_wide, base_namespaced = operator_grants(rendered["standalone"])
        wide, namespaced = operator_grants(objs)
        assert wide - base_wide == podgroups | reads and base_wide <= wide
        assert namespaced == base_namespaced == set()
    else:
        elsewhere = "ml" if install == "namespaced-elsewhere" else None
        objs = render_combined("namespaced", component, tmp_path_factory, namespace=elsewhere)
        base_wide, base_namespaced = operator_grants(rendered["namespaced"])
        wide, namespaced = operator_grants(objs)
        assert namespaced - base_namespaced == podgroups and base_namespaced <= namespaced
        assert base_wide == set() and wide == reads
        assert {o["metadata"]["namespace"] for o in by_kind(objs, "ServiceAccount")} == {
            elsewhere or "kubeflow"
        }
        for obj in objs:
            kubernetes_validate.validate(obj, K8S_VERSIONS[-1], strict=True)
    readers = [o for o in by_kind(objs, "ClusterRole") if o["metadata"]["name"] != OPERATOR]
    read = {plural for _, plural, _ in reads}
    assert sorted(o["metadata"]["name"] for o in readers) == (
        ["tf-job-operator-priorityclass-reader"] * ("priorityclasses" in read)
        + ["tf-job-operator-queue-reader"] * ("queues" in read)
    )


def test_kube_batch_default_queue_renders(tmp_path_factory):
    (queue,) = render(MANIFESTS / "components/gang-kube-batch/default-queue", tmp_path_factory)
    assert queue["apiVersion"] == "scheduling.incubator.k8s.io/v1alpha1"
    assert (queue["kind"], queue["metadata"]["name"], queue["spec"]) == (
        "Queue",
        "default",
        {"weight": 1},
    )


def test_volcano_podgroup_crd_has_no_status_subresource():
    """Volcano v1.8's CRD has none: a scheduler's writes to /status would 404 there."""
    crd = yaml.safe_load((MANIFESTS / "components/gang-volcano/podgroup-crd.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    assert not (version.get("subresources") or {}).get("status")
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["STATUS", "minMember", "RUNNINGS", "AGE", "QUEUE"]


@pytest.mark.parametrize(
    ("component", "packaged"),
    [
        ("gang-kube-batch/podgroup-crd.yaml", "kube-batch-podgroup-crd.yaml"),
        ("gang-kube-batch/queue-crd.yaml", "kube-batch-queue-crd.yaml"),
        ("gang-volcano/podgroup-crd.yaml", "volcano-podgroup-crd.yaml"),
    ],
)
def test_local_cluster_installs_the_shipped_crds(component, packaged):
    """The local cluster's batch schedulers install exactly the CRDs the manifests ship."""
    from localcluster.batchscheduler.bootstrap import crd

    shipped = yaml.safe_load((MANIFESTS / "components" / component).read_text())
    assert crd(packaged) == shipped


def test_local_cluster_installs_the_shipped_scheduler_plugins_crd():
    from localcluster.coscheduling.bootstrap import crd

    shipped = MANIFESTS / "components/gang-scheduler-plugins/podgroup-crd.yaml"
    assert crd() == yaml.safe_load(shipped.read_text())
    (version,) = crd()["spec"]["versions"]
    assert version["subresources"] == {"status": {}}  # the PodGroup controller writes /status


def test_namespaced_overlay_uses_a_role_in_its_namespace(rendered):
    objs = rendered["namespaced"]
    assert not by_kind(objs, "ClusterRole") and not by_kind(objs, "ClusterRoleBinding")
    (role,) = by_kind(objs, "Role")
    (binding,) = by_kind(objs, "RoleBinding")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "kubeflow"
    assert _rules([{**role, "kind": "ClusterRole"}]) == _rules(rendered["standalone"])
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "tf-job-operator",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "tf-job-operator", "namespace": "kubeflow"}
    ]
    (deploy,) = by_kind(objs, "Deployment")
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert "--namespace=$(KUBEFLOW_NAMESPACE)" in container["args"]
    assert container["env"][0]["name"] == "KUBEFLOW_NAMESPACE"  # defined, so $(...) expands
