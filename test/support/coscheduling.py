"""Coscheduling test helpers: pods and PodGroups as scheduler-plugins' test wrappers build
them, and a fake of the cluster view the PodGroup manager reads."""

from __future__ import annotations

from fractions import Fraction

from localcluster.coscheduling.podgroup import POD_GROUP_LABEL, PodGroupSpec


def pod(name: str, group: str | None = None, namespace: str = "ns", node: str = "") -> dict:
    meta: dict = {"name": name, "namespace": namespace}
    if group:
        meta["labels"] = {POD_GROUP_LABEL: group}
    spec: dict = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec}


def podgroup(name: str, min_member: int, namespace: str = "ns", **spec) -> dict:
    body = {"minMember": min_member, **spec}
    return {"metadata": {"name": name, "namespace": namespace}, "spec": body}


class FakeView:
    """Pods known to the pod lister (``listed``), pods holding a node (``assigned``), PodGroups,
    and the free room of each node."""

    def __init__(self, podgroups=(), listed=(), assigned=(), free=()) -> None:
        self.podgroups = {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in podgroups
        }
        self.listed = list(listed)
        self.assigned = list(assigned)
        self.free = [dict(f) for f in free]

    def podgroup(self, key: str) -> PodGroupSpec | None:
        obj = self.podgroups.get(key)
        return PodGroupSpec.parse(obj) if obj else None

    @staticmethod
    def _in(key: str, pods: list[dict]) -> list[dict]:
        namespace, _, name = key.partition("/")
        return [
            p
            for p in pods
            if p["metadata"]["namespace"] == namespace
            and (p["metadata"].get("labels") or {}).get(POD_GROUP_LABEL) == name
        ]

    def member_count(self, key: str) -> int:
        return len(self._in(key, self.listed))

    def assigned_count(self, key: str, excluding: str = "") -> int:
        return sum(
            1
            for p in self._in(key, self.assigned)
            if f"{p['metadata']['namespace']}/{p['metadata']['name']}" != excluding
        )

    def free_per_node(self, group: str) -> list[dict[str, Fraction]]:
        return [dict(f) for f in self.free]
