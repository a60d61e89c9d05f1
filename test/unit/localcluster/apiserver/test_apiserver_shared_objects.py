"""Stored objects are shared, never copied, by every reader in the process; with
LOCALCLUSTER_CHECK_SHARED set (the test suite sets it) a mutation of one is caught."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry
from localcluster.controlplane.emulated.storage.store import CHECK_SHARED_ENV

CONFIGMAPS = ("", "v1", "configmaps")
PODS = ("", "v1", "pods")


@pytest.fixture
def reg(monkeypatch):
    monkeypatch.setenv(CHECK_SHARED_ENV, "1")
    registry = Registry()
    yield registry
    registry.gc.stop()


def test_a_stored_object_mutated_behind_the_registry_fails_the_next_write(reg):
    reg.create(CONFIGMAPS, "default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    reg.get_shared(CONFIGMAPS, "default", "cm")["data"]["a"] = "2"  # what a reader must not do
    with pytest.raises(AssertionError, match="configmaps default/cm was mutated"):
        reg.update(CONFIGMAPS, "default", "cm", {"metadata": {"name": "cm"}, "data": {"a": "3"}})


def test_a_mutation_nothing_writes_over_fails_at_stop(reg):
    reg.create(CONFIGMAPS, "default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    reg.get_shared(CONFIGMAPS, "default", "cm")["metadata"]["labels"] = {"x": "y"}
    with pytest.raises(AssertionError, match="was mutated"):
        reg.stop()


def test_writes_that_leave_stored_objects_alone_pass(reg):
    reg.create(CONFIGMAPS, "default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    copy = reg.get(CONFIGMAPS, "default", "cm")
    copy["data"]["a"] = "2"
    reg.update(CONFIGMAPS, "default", "cm", copy)
    reg.delete(CONFIGMAPS, "default", "cm")
    reg.stop()


def test_a_status_write_shares_the_unchanged_parts_and_leaves_the_old_version_alone(reg):
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    old = reg.create_shared(PODS, "default", pod)
    old_spec, old_status = old["spec"], old["status"]
    body = {**old, "status": {"phase": "Running"}}
    new = reg.update_shared(PODS, "default", "p", body, subresource="status")
    assert new["status"] == {"phase": "Running"}
    assert new["spec"] is old_spec  # shared, not copied
    assert old["status"] is old_status and old["status"]["phase"] == "Pending"
    assert old["metadata"]["resourceVersion"] != new["metadata"]["resourceVersion"]
    reg.stop()
