"""The shipped roles are least privilege, for the cluster-wide operator (base ClusterRole plus
the gang component's PodGroup rule) and for the namespaced overlay (its Role, --namespace):

- the full role is used entirely: a scenario run makes the operator perform every
  (verb, resource) the role grants and none is denied, and no rule uses ``*``;
- every grant is needed: with any single (verb, resource) removed, the operator's run hits a
  403 on exactly that operation (named in ``rbac_runs.OPERATIONS``).

Each run is a real ``tf-operator`` process with the service account's token (see
``rbac_runs``); a removal run stops at the first denial of the removed operation. Both
control planes: the emulator's authorizer, and kube-apiserver's RBAC authorizer with its
decisions read from the audit log.
"""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import BACKENDS
from support.audit import AuditLog
from support.crd import CRD_FILE, install_crds

from .rbac_runs import (
    OPERATIONS,
    ROOT,
    RoleRun,
    component_rules,
    manifest_rules,
    triples,
    without,
)

pytestmark = pytest.mark.integration

CLUSTER_RULES = manifest_rules("base/cluster-role.yaml") + component_rules("gang-kube-batch")
NAMESPACED_RULES = manifest_rules("overlays/namespaced/role.yaml")
LEASE = "coordination.k8s.io"


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request, tmp_path_factory):
    if request.param == "real":
        audit = AuditLog(tmp_path_factory.mktemp("audit"))
        kwargs: dict = {"apiserver_args": audit.apiserver_args}
    else:
        audit, kwargs = None, {"secure_port": 0}
    with LocalCluster(control_plane=request.param, kubelet="none", **kwargs) as c:
        install_crds(
            c.client, CRD_FILE, ROOT / "manifests/components/gang-kube-batch/podgroup-crd.yaml"
        )
        c.audit = audit
        yield c


_runs = iter(range(10_000))


def role_run(cluster, tmp_path, rules, scope, removed=None):
    gang = scope == "cluster"
    lock = "leases" if removed and removed[1] == LEASE else "endpoints"
    name = f"lp-{scope[:2]}-{next(_runs)}"
    return RoleRun(
        cluster, name, rules, scope, tmp_path, gang=gang, lock=lock, decisions=cluster.audit
    )


def test_roles_name_every_verb_and_resource():
    for rule in CLUSTER_RULES + NAMESPACED_RULES:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule[field], rule
        assert not rule.get("resourceNames") and not rule.get("nonResourceURLs")
    assert set(triples(NAMESPACED_RULES)) == set(triples(manifest_rules("base/cluster-role.yaml")))
    assert set(triples(CLUSTER_RULES)) == set(OPERATIONS)


@pytest.mark.parametrize("scope", ["cluster", "namespace"])
def test_full_role_is_used_and_never_denied(cluster, tmp_path, scope):
    rules = CLUSTER_RULES if scope == "cluster" else NAMESPACED_RULES
    result = role_run(cluster, tmp_path, rules, scope).run()
    leases = role_run(cluster, tmp_path, rules, scope, ("get", LEASE, "leases")).run(
        election_only=True
    )
    used = result.allowed() | leases.allowed()
    assert not result.denied() and not leases.denied(), (result.denied(), result.log)
    assert set(triples(rules)) - used == set(), "granted but never used"
    assert used - set(triples(rules)) == set()  # (discovery etc. would show up here)


def _cases():
    cluster = [
        pytest.param("cluster", t, id=f"cluster-{t[0]}-{t[2]}") for t in triples(CLUSTER_RULES)
    ]
    namespaced = [
        pytest.param("namespace", t, id=f"namespace-{t[0]}-{t[2]}")
        for t in triples(NAMESPACED_RULES)
    ]
    return cluster + namespaced


@pytest.mark.parametrize(("scope", "removed"), _cases())
def test_every_grant_is_needed(cluster, tmp_path, scope, removed):
    rules = without(CLUSTER_RULES if scope == "cluster" else NAMESPACED_RULES, removed)
    run = role_run(cluster, tmp_path, rules, scope, removed)
    result = run.run(stop_on=removed, election_only=removed[1] == LEASE)
    assert result.stopped_early, f"{OPERATIONS[removed]}: never denied\n{result.log}"
    assert result.denied() == {removed}, f"{OPERATIONS[removed]}: {result.denied()}"
