"""YAML from users, with aliases bounded: no "billion laughs".

YAML anchors and aliases let a document name a node once and repeat it: a 638-byte document of
nested aliases stands for billions of nodes. PyYAML builds the repeats as shared Python
objects, which costs nothing until something walks them (encoding the job as JSON to send it:
2.5 GB in 7 s for one such TFJob, ten times that with one more level). Like the YAML decoder
Kubernetes uses (go-yaml's "document contains excessive aliasing"), :func:`load` and
:func:`load_all` keep aliases usable (``<<: *defaults`` is common in manifests) but refuse a
document whose expansion exceeds ``MAX_EXPANDED_NODES`` nodes, or that refers to itself,
before anything is built from it. Every YAML the tools read from a user (the dashboard's
create, ``tfjob submit``, the SDK's ``load_job``, kubeconfig files) goes through here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

# Nodes a document may stand for once its aliases are expanded (a TFJob has about a hundred).
MAX_EXPANDED_NODES = 100_000

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ExcessiveAliasing(yaml.YAMLError):
    """A document whose aliases expand beyond ``MAX_EXPANDED_NODES`` nodes, or into itself."""


def expanded_size(root: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """Nodes ``root`` stands for with every alias expanded; ExcessiveAliasing past ``limit``
    or on a cycle. Each distinct node is counted once and its size reused, so this costs the
    document's size, not its expansion."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    work: list[tuple[yaml.Node, bool]] = [(root, False)]
    while work:
        node, children_done = work.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            visiting.discard(key)
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > limit:
                raise ExcessiveAliasing(
                    f"the document expands to more than {limit} nodes through its aliases"
                )
            sizes[key] = size
            continue
        if key in visiting:
            raise ExcessiveAliasing("the document contains itself through an alias")
        visiting.add(key)
        work.append((node, True))
        for child in children:
            if id(child) in visiting:
                raise ExcessiveAliasing("the document contains itself through an alias")
            work.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_all(text: str | bytes) -> Iterator[Any]:
    """Each document of ``text`` (as ``yaml.safe_load_all``), aliases bounded."""
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            expanded_size(node)
            yield loader.construct_document(node)
    finally:
        loader.dispose()


def load(text: str | bytes) -> Any:
    """The single document of ``text`` (None when empty; as ``yaml.safe_load``), aliases
    bounded."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
