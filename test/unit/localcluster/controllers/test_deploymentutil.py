"""Deployment arithmetic: fenceposts, the rolling-update steps, hashes and status."""

import pytest

from localcluster.controllers import deploymentutil as du


def deployment(replicas=4, surge="25%", unavailable="25%", strategy="RollingUpdate"):
    spec = {"replicas": replicas, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "d", "generation": 1}, "spec": spec}


def rs(name, replicas, available=None, created="2026-01-01T00:00:00Z"):
    available = replicas if available is None else available
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"replicas": replicas},
        "status": {
            "replicas": replicas,
            "availableReplicas": available,
            "readyReplicas": available,
        },
    }


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [
        (4, "25%", "25%", (1, 1)),
        (10, "25%", "25%", (3, 2)),  # surge rounds up, unavailability down
        (1, "25%", "25%", (1, 0)),
        (3, 0, 0, (0, 1)),  # both zero: one may be unavailable
        (5, 2, "0%", (2, 0)),
    ],
)
def test_fenceposts(replicas, surge, unavailable, expected):
    assert du.fenceposts(deployment(replicas, surge, unavailable)) == expected


def test_new_set_scales_up_within_the_surge():
    d = deployment(4)
    old, new = rs("old", 4), rs("new", 0)
    assert du.new_rs_replicas(d, [old, new], new) == 1
    new = rs("new", 1, 0)
    assert du.new_rs_replicas(d, [old, new], new) == 1  # 5 pods: at the limit
    assert du.new_rs_replicas(d, [rs("old", 3), new], new) == 2
    assert du.new_rs_replicas(deployment(4, strategy="Recreate"), [old, new], new) == 4


def test_old_sets_scale_down_keeping_minimum_availability():
    d = deployment(4)
    old, new = rs("old", 4), rs("new", 1, 0)
    # 5 pods, 4 available, min available 3, new set has 1 unavailable: may remove 1
    assert du.old_rs_scale_downs(d, [old, new], [old], new) == {"old": 3}
    new = rs("new", 1, 1)
    assert du.old_rs_scale_downs(d, [rs("old", 3), new], [rs("old", 3)], new) == {"old": 2}


def test_unhealthy_old_replicas_go_first_and_oldest_sets_first():
    d = deployment(4)
    older = rs("older", 2, 0, "2026-01-01T00:00:00Z")
    old = rs("old", 2, 2, "2026-01-02T00:00:00Z")
    new = rs("new", 1, 1)
    downs = du.old_rs_scale_downs(d, [older, old, new], [old, older], new)
    assert downs == {"older": 0}  # its two unavailable replicas cost no availability


def test_hash_and_template_equality():
    template = {
        "metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    h = du.template_hash(template)
    assert h == du.template_hash(dict(reversed(list(template.items()))))
    assert h != du.template_hash(template, 1)
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(h) <= 10
    hashed = {"metadata": {"labels": {"app": "a", du.HASH_LABEL: h}}, "spec": template["spec"]}
    assert du.equal_ignore_hash(hashed, template)
    assert not du.equal_ignore_hash(hashed, {**template, "spec": {"containers": []}})


def test_status_and_conditions():
    d = deployment(4)
    new = rs("new", 4, 3)
    status = du.calculate_status(d, [new], new, 1_800_000_000)
    assert status["replicas"] == 4 and status["updatedReplicas"] == 4
    assert status["availableReplicas"] == 3 and status["unavailableReplicas"] == 1
    available = du.condition(status, "Available")
    assert available["status"] == "True" and available["reason"] == "MinimumReplicasAvailable"
    assert not du.complete(d, status)
    status = du.calculate_status(d, [rs("new", 4, 2)], rs("new", 4, 2), 1_800_000_000)
    assert du.condition(status, "Available")["status"] == "False"
    assert du.complete(d, du.calculate_status(d, [rs("new", 4)], rs("new", 4), 1_800_000_000))
