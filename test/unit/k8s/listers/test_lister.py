from tf_operator.k8s.cache import new_indexer, new_store
from tf_operator.k8s.labels import parse_selector
from tf_operator.k8s.listers import Lister


def obj(name, ns, labels):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}}


def names(objs):
    return sorted(o["metadata"]["name"] for o in objs)


def filled(indexer):
    indexer.add(obj("a", "n1", {"job": "x", "role": "ps"}))
    indexer.add(obj("b", "n1", {"job": "x", "role": "worker"}))
    indexer.add(obj("c", "n2", {"job": "x", "role": "worker"}))
    indexer.add(obj("d", "n2", {}))
    return indexer


def test_list_with_selector_forms():
    lister = Lister(filled(new_indexer()))
    assert names(lister.list()) == ["a", "b", "c", "d"]
    assert names(lister.list("role=worker")) == ["b", "c"]
    assert names(lister.list({"job": "x", "role": "ps"})) == ["a"]
    assert names(lister.list(parse_selector("!job"))) == ["d"]


def test_namespaced_uses_index_and_filters():
    lister = Lister(filled(new_indexer()))
    assert names(lister.namespaced("n1").list()) == ["a", "b"]
    assert names(lister.namespaced("n2").list("role=worker")) == ["c"]
    assert lister.namespaced("n3").list() == []
    assert lister.namespaced("n1").get("a")["metadata"]["name"] == "a"
    assert lister.namespaced("n1").get("c") is None
    assert lister.get("n2", "d")["metadata"]["name"] == "d"
    assert names(lister.namespaced("").list("job=x")) == ["a", "b", "c"]


def test_without_namespace_index_and_cluster_scoped():
    lister = Lister(filled(new_store()))
    assert names(lister.namespaced("n2").list()) == ["c", "d"]
    nodes = new_indexer()
    nodes.add({"metadata": {"name": "node-1", "labels": {}}})
    assert Lister(nodes).get(None, "node-1")["metadata"]["name"] == "node-1"
    assert Lister(nodes).get("", "node-1") is not None
