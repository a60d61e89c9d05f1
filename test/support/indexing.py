"""Objects and a stand-in informer for the index tests."""

from __future__ import annotations

from tf_operator.k8s.cache import new_indexer


def owned_object(
    name: str, ns: str = "ns", labels: dict | None = None, owner: str | None = None
) -> dict:
    """An object with labels and, with ``owner``, a controller reference with that uid."""
    m: dict = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner is not None:
        m["ownerReferences"] = [
            {"kind": "Other", "uid": "not-controller"},
            {"kind": "TFJob", "uid": owner, "controller": True},
        ]
    return {"metadata": m}


class FakeInformer:
    """What indexer registration needs of an informer; counts ``add_indexers`` calls."""

    def __init__(self) -> None:
        self.indexer = new_indexer()
        self.calls = 0

    def get_indexer(self):
        return self.indexer

    def add_indexers(self, indexers) -> None:
        self.calls += 1
        self.indexer.add_indexers(indexers)
