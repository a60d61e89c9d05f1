"""The per-job pod/service indices: the union lookup, and registering them once."""

from __future__ import annotations

from support.indexing import FakeInformer
from support.indexing import owned_object as obj
from tf_operator.common.jobcontroller.index import (
    CONTROLLER_UID_INDEX,
    add_job_indexers,
    job_name_index_name,
    objects_for_job,
)

LABEL = "tf-job-name"


def indexer():
    informer = FakeInformer()
    add_job_indexers(informer, LABEL)
    return informer.indexer


def names(objs: list[dict]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_lookup_is_the_union_of_owned_and_labelled_within_the_namespace():
    idx = indexer()
    idx.add(obj("owned-labelled", labels={LABEL: "job"}, owner="u1"))
    idx.add(obj("owned-unlabelled", owner="u1"))
    idx.add(obj("orphan-labelled", labels={LABEL: "job"}))
    idx.add(obj("other-job", labels={LABEL: "job2"}, owner="u2"))
    idx.add(obj("orphan-other", labels={LABEL: "job2"}))
    idx.add(obj("elsewhere-owned", ns="ns2", labels={LABEL: "job"}, owner="u1"))
    idx.add(obj("elsewhere-orphan", ns="ns2", labels={LABEL: "job"}))
    found = objects_for_job(idx, LABEL, "ns", "job", "u1")
    assert names(found) == ["orphan-labelled", "owned-labelled", "owned-unlabelled"]


def test_lookup_follows_label_and_owner_changes_in_the_cache():
    idx = indexer()
    idx.add(obj("p", labels={LABEL: "job"}))
    assert names(objects_for_job(idx, LABEL, "ns", "job", "u1")) == ["p"]
    idx.update(obj("p", labels={LABEL: "renamed"}))
    assert objects_for_job(idx, LABEL, "ns", "job", "u1") == []
    idx.update(obj("p", labels={LABEL: "renamed"}, owner="u1"))
    assert names(objects_for_job(idx, LABEL, "ns", "job", "u1")) == ["p"]
    idx.delete(obj("p", labels={LABEL: "renamed"}, owner="u1"))
    assert objects_for_job(idx, LABEL, "ns", "job", "u1") == []


def test_add_job_indexers_is_idempotent_for_controllers_sharing_an_informer():
    informer = FakeInformer()
    add_job_indexers(informer, LABEL)
    add_job_indexers(informer, LABEL)
    assert informer.calls == 1
    assert {CONTROLLER_UID_INDEX, job_name_index_name(LABEL)} <= set(
        informer.indexer.get_indexers()
    )
