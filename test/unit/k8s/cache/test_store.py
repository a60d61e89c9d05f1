import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tf_operator.k8s.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    KeyFuncError,
    deletion_handling_meta_namespace_key_func,
    label_index_func,
    meta_namespace_index_func,
    meta_namespace_key_func,
    new_indexer,
    new_store,
    split_meta_namespace_key,
)


def obj(name, ns="default", labels=None, rv="1"):
    return {
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}, "resourceVersion": rv}
    }


def test_keys():
    assert meta_namespace_key_func(obj("a", "ns")) == "ns/a"
    assert meta_namespace_key_func({"metadata": {"name": "node1"}}) == "node1"
    assert meta_namespace_key_func("ns/x") == "ns/x"
    with pytest.raises(KeyFuncError):
        meta_namespace_key_func({"metadata": {}})
    tomb = DeletedFinalStateUnknown("ns/gone", None)
    assert deletion_handling_meta_namespace_key_func(tomb) == "ns/gone"
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    with pytest.raises(ValueError):
        split_meta_namespace_key("a/b/c")
    assert meta_namespace_index_func(obj("a", "ns")) == ["ns"]


def test_store_crud_and_replace():
    store = new_store()
    store.add(obj("a"))
    store.add(obj("b"))
    store.update(obj("a", rv="2"))
    assert store.get(obj("a"))["metadata"]["resourceVersion"] == "2"
    assert sorted(store.list_keys()) == ["default/a", "default/b"]
    store.delete(obj("b"))
    store.delete(DeletedFinalStateUnknown("default/zzz", None))  # unknown keys are fine
    assert store.get_by_key("default/b") is None
    store.replace([obj("x"), obj("y")], "10")
    assert sorted(store.list_keys()) == ["default/x", "default/y"]
    assert len(store) == 2


def test_indexer_namespace_and_custom_indices():
    idx = new_indexer()
    idx.add_indexers({"job": label_index_func("job")})
    idx.add(obj("a", "n1", {"job": "j1"}))
    idx.add(obj("b", "n1", {"job": "j2"}))
    idx.add(obj("c", "n2", {"job": "j1"}))
    assert sorted(o["metadata"]["name"] for o in idx.by_index(NAMESPACE_INDEX, "n1")) == ["a", "b"]
    assert sorted(idx.index_keys("job", "j1")) == ["n1/a", "n2/c"]
    assert sorted(idx.list_index_func_values("job")) == ["j1", "j2"]
    assert sorted(
        o["metadata"]["name"] for o in idx.index("job", obj("q", labels={"job": "j1"}))
    ) == ["a", "c"]
    # Moving an object between index values updates the index.
    idx.update(obj("a", "n1", {"job": "j2"}))
    assert sorted(idx.index_keys("job", "j2")) == ["n1/a", "n1/b"]
    idx.delete(obj("b", "n1"))
    assert idx.index_keys("job", "j2") == ["n1/a"]
    idx.delete(obj("a", "n1"))
    assert "j2" not in idx.list_index_func_values("job")
    with pytest.raises(KeyError):
        idx.by_index("nope", "x")
    with pytest.raises(ValueError):
        idx.add_indexers({"job": label_index_func("job")})
    # Replace rebuilds indices from scratch.
    idx.replace([obj("z", "n3", {"job": "j9"})])
    assert idx.list_index_func_values(NAMESPACE_INDEX) == ["n3"]
    assert idx.index_keys("job", "j9") == ["n3/z"]


def test_add_indexers_indexes_existing_items():
    idx = new_indexer()
    idx.add(obj("a", labels={"k": "v"}))
    idx.add_indexers({"k": label_index_func("k")})
    assert idx.index_keys("k", "v") == ["default/a"]


def test_concurrent_writers_keep_index_consistent():
    idx = new_indexer()

    def writer(n):
        for i in range(300):
            idx.add(obj(f"{n}-{i}", f"ns{i % 3}"))
            if i % 2:
                idx.delete(obj(f"{n}-{i}", f"ns{i % 3}"))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(idx) == 4 * 150
    total = sum(len(idx.by_index(NAMESPACE_INDEX, f"ns{k}")) for k in range(3))
    assert total == len(idx)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "update", "delete"]),
            st.sampled_from(["a", "b", "c"]),
            st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
        ),
        max_size=30,
    )
)
def test_the_indices_always_match_the_items(ops):
    """Whatever the writes (an update keeping, moving, widening or emptying an object's index
    values), every index equals the one rebuilt from the stored items."""

    def tags(o):
        return list(o["metadata"]["labels"]["tags"].split(",")) if o["metadata"]["labels"] else []

    idx = new_indexer(indexers={"tags": tags})
    for op, name, values in ops:
        item = obj(name, labels={"tags": ",".join(values)} if values else None)
        if op == "delete":
            idx.delete(item)
        else:
            getattr(idx, op)(item)
    rebuilt: dict[str, set[str]] = {}
    for item in idx.list():
        for value in tags(item):
            rebuilt.setdefault(value, set()).add(meta_namespace_key_func(item))
    assert {
        v: set(idx.index_keys("tags", v)) for v in idx.list_index_func_values("tags")
    } == rebuilt
