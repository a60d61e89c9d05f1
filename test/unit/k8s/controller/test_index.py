"""Namespaced index functions: what each object is filed under; registering indexers once."""

from __future__ import annotations

from support.indexing import FakeInformer
from support.indexing import owned_object as obj
from tf_operator.k8s.controller.index import (
    add_missing_indexers,
    namespaced_controller_uid_index_func,
    namespaced_label_index_func,
)

LABEL = "tf-job-name"


def test_controller_uid_index_files_under_namespace_and_controller_uid_only():
    assert namespaced_controller_uid_index_func(obj("a", owner="u1")) == ["ns/u1"]
    assert namespaced_controller_uid_index_func(obj("a")) == []
    no_uid = {"metadata": {"namespace": "ns", "ownerReferences": [{"controller": True}]}}
    assert namespaced_controller_uid_index_func(no_uid) == []
    assert namespaced_controller_uid_index_func("not a dict") == []


def test_label_index_files_under_namespace_and_value_when_present():
    index = namespaced_label_index_func(LABEL)
    assert index(obj("a", labels={LABEL: "job"})) == ["ns/job"]
    assert index(obj("a", labels={"other": "job"})) == []


def test_only_missing_indexers_are_added():
    informer = FakeInformer()
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a")})
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a")})
    assert informer.calls == 1
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a"), "b": lambda o: []})
    assert informer.calls == 2
    assert {"a", "b"} <= set(informer.indexer.get_indexers())
