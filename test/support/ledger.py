"""A started node ledger over an in-process registry holding the given nodes, for the tests of
what the schedulers read from it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry
from localcluster.kubelet.node import NodeConfig, register_node
from localcluster.scheduler.ledger import NodeLedger


@contextlib.contextmanager
def started_ledger(
    *nodes: NodeConfig, namespaces: tuple[str, ...] = ()
) -> Iterator[tuple[Registry, NodeLedger]]:
    """The registry (with ``namespaces`` beside ``default``) and its ledger, synced."""
    registry, stop = Registry(), threading.Event()
    for namespace in namespaces:
        registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": namespace}})
    ledger = NodeLedger(InProcessClient(registry))
    try:
        ledger.start(stop)
        for node in nodes:
            register_node(InProcessClient(registry), node)
        assert ledger.sync()
        yield registry, ledger
    finally:
        stop.set()
        ledger.join(2)
        registry.stop()
