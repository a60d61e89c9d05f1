"""Informer.sync(): a barrier that applies every committed change on the caller's
thread, in order, and a resource type that does not exist yet is an empty, quiet informer."""

from __future__ import annotations

import logging
import threading

import pytest

from localcluster.client.informer import Informer
from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry

CONFIGMAPS = ("", "v1", "configmaps")
WIDGETS = ("example.com", "v1", "widgets")


@pytest.fixture
def registry():
    reg = Registry()
    stop = threading.Event()
    yield reg, stop
    stop.set()
    reg.stop()


def test_sync_applies_everything_written_before_it(registry):
    reg, stop = registry
    seen: list[tuple[str, str]] = []
    informer = Informer(
        InProcessClient(reg), CONFIGMAPS, lambda t, o, _: seen.append((t, o["metadata"]["name"]))
    )
    informer.start(stop)
    assert informer.sync(5)
    for i in range(200):
        reg.create(CONFIGMAPS, "default", {"metadata": {"name": f"cm-{i}"}})
    reg.delete(CONFIGMAPS, "default", "cm-7")
    assert informer.sync(5)
    names = [n for t, n in seen if t == "ADDED" and n.startswith("cm-")]
    assert names == [f"cm-{i}" for i in range(200)]  # in commit order, none missing
    assert seen[-1] == ("DELETED", "cm-7")
    assert informer.get("default/cm-7") is None and informer.get("default/cm-199") is not None


def test_a_missing_resource_type_is_empty_and_quiet(registry, caplog):
    reg, stop = registry
    informer = Informer(InProcessClient(reg), WIDGETS, lambda *_: None)
    with caplog.at_level(logging.INFO, logger="localcluster.client.informer"):
        informer.start(stop)
        assert informer.sync(5)
    assert informer.items() == []
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_a_watch_that_starts_too_late_relists_with_a_warning(registry, caplog, monkeypatch):
    """410 Gone (the history was compacted past the list's resourceVersion) is routine for a
    reflector: relist, log one warning, no traceback."""
    from localcluster.apimachinery import errors

    reg, stop = registry
    real_watch, calls = reg.watch, []

    def compacted_once(*args, **kwargs):
        calls.append(kwargs.get("resource_version"))
        if len(calls) == 1:
            raise errors.gone("too old resource version: 1 (2)")
        return real_watch(*args, **kwargs)

    monkeypatch.setattr(reg, "watch", compacted_once)
    reg.create(CONFIGMAPS, "default", {"metadata": {"name": "kept"}})
    informer = Informer(InProcessClient(reg), CONFIGMAPS, lambda *_: None)
    with caplog.at_level(logging.INFO, logger="localcluster.client.informer"):
        informer.start(stop)
        assert informer.sync(5)
    assert len(calls) == 2 and informer.get("default/kept") is not None
    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "too old resource version" in record.getMessage()


def test_handlers_get_the_stored_objects_themselves(registry):
    """No copy per informer: what a handler sees is what the registry stores (and serves)."""
    reg, stop = registry
    seen: list[dict] = []
    informer = Informer(InProcessClient(reg), CONFIGMAPS, lambda t, o, _: seen.append(o))
    informer.start(stop)
    assert informer.sync(5)
    reg.create(CONFIGMAPS, "default", {"metadata": {"name": "shared"}, "data": {"k": "v"}})
    assert informer.sync(5)
    stored = reg.get_shared(CONFIGMAPS, "default", "shared")
    assert seen[-1] is stored
    assert informer.get("default/shared") is stored
