"""Namespaced index functions: what each object is filed under; registering indexers once."""

from __future__ import annotations

from tf_operator.k8s.cache import new_indexer
from tf_operator.k8s.controller.index import (
    add_missing_indexers,
    namespaced_controller_uid_index_func,
    namespaced_label_index_func,
)

LABEL = "tf-job-name"


def obj(name: str, ns: str = "ns", labels: dict | None = None, owner: str | None = None) -> dict:
    m: dict = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner is not None:
        m["ownerReferences"] = [
            {"kind": "Other", "uid": "not-controller"},
            {"kind": "TFJob", "uid": owner, "controller": True},
        ]
    return {"metadata": m}


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


class FakeInformer:
    def __init__(self) -> None:
        self.indexer = new_indexer()
        self.calls = 0

    def get_indexer(self):
        return self.indexer

    def add_indexers(self, indexers) -> None:
        self.calls += 1
        self.indexer.add_indexers(indexers)


def test_only_missing_indexers_are_added():
    informer = FakeInformer()
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a")})
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a")})
    assert informer.calls == 1
    add_missing_indexers(informer, {"a": namespaced_label_index_func("a"), "b": lambda o: []})
    assert informer.calls == 2
    assert {"a", "b"} <= set(informer.indexer.get_indexers())
