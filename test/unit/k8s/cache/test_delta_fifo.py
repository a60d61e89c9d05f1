import threading

import pytest

from tf_operator.k8s.cache import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    DeltaFIFO,
    FIFOClosedError,
    RequeueError,
    new_store,
)


def obj(name, rv="1"):
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def pop_all(fifo):
    out = []
    while len(fifo):
        out.append(fifo.pop(lambda d: None))
    return out


def types(deltas):
    return [d.type for d in deltas]


def test_deltas_accumulate_per_key_in_fifo_order():
    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.add(obj("b"))
    fifo.update(obj("a", "2"))
    fifo.delete(obj("a", "3"))
    first, second = pop_all(fifo)
    assert types(first) == [ADDED, UPDATED, DELETED]
    assert first[-1].object["metadata"]["resourceVersion"] == "3"
    assert types(second) == [ADDED]


def test_consecutive_deletes_collapse_preferring_real_object():
    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.delete(obj("a", "2"))
    fifo.delete(DeletedFinalStateUnknown("ns/a", obj("a")))
    (deltas,) = pop_all(fifo)
    assert types(deltas) == [ADDED, DELETED]
    assert not isinstance(deltas[-1].object, DeletedFinalStateUnknown)
    fifo.add(obj("b"))
    fifo.delete(DeletedFinalStateUnknown("ns/b", obj("b")))
    fifo.delete(obj("b", "2"))
    (deltas,) = pop_all(fifo)
    assert deltas[-1].object["metadata"]["resourceVersion"] == "2"


def test_delete_of_unknown_object_is_ignored():
    known = new_store()
    fifo = DeltaFIFO(known_objects=known)
    fifo.delete(obj("ghost"))
    assert len(fifo) == 0
    known.add(obj("real"))
    fifo.delete(obj("real"))
    assert types(fifo.get(obj("real"))) == [DELETED]


def test_replace_emits_replaced_and_tombstones_for_vanished_known_objects():
    known = new_store()
    known.add(obj("stays"))
    known.add(obj("gone", "7"))
    fifo = DeltaFIFO(known_objects=known)
    assert not fifo.has_synced()
    fifo.replace([obj("stays", "2"), obj("new")], "9")
    assert not fifo.has_synced()
    popped = {}
    while len(fifo):
        deltas = fifo.pop(lambda d: None)
        popped[fifo.key_of(deltas)] = deltas
    assert fifo.has_synced()
    assert types(popped["ns/stays"]) == [REPLACED]
    assert types(popped["ns/new"]) == [REPLACED]
    tomb = popped["ns/gone"][0].object
    assert isinstance(tomb, DeletedFinalStateUnknown)
    assert tomb.key == "ns/gone" and tomb.obj["metadata"]["resourceVersion"] == "7"


def test_replace_tombstones_queued_but_unlisted_objects():
    fifo = DeltaFIFO(known_objects=new_store())
    fifo.add(obj("raced"))
    fifo.replace([], "5")
    (deltas,) = pop_all(fifo)
    assert types(deltas) == [ADDED, DELETED]
    assert isinstance(deltas[-1].object, DeletedFinalStateUnknown)


def test_replace_without_known_objects_and_sync_type():
    fifo = DeltaFIFO(emit_delta_type_replaced=False)
    fifo.add(obj("old"))
    fifo.replace([obj("x")], "1")
    got = {fifo.key_of(d): types(d) for d in pop_all(fifo)}
    assert got == {"ns/old": [ADDED, DELETED], "ns/x": [SYNC]}


def test_has_synced_counts_only_initial_population():
    fifo = DeltaFIFO(known_objects=new_store())
    fifo.replace([obj("a"), obj("b")], "1")
    fifo.pop(lambda d: None)
    fifo.add(obj("c"))
    assert not fifo.has_synced()
    fifo.pop(lambda d: None)
    assert fifo.has_synced()


def test_resync_queues_sync_for_known_objects_without_pending_deltas():
    known = new_store()
    known.add(obj("a"))
    known.add(obj("b"))
    fifo = DeltaFIFO(known_objects=known)
    fifo.update(obj("a", "2"))
    fifo.resync()
    got = {fifo.key_of(d): types(d) for d in pop_all(fifo)}
    assert got == {"ns/a": [UPDATED], "ns/b": [SYNC]}
    fifo.delete(obj("a"))
    fifo.resync()
    got = {fifo.key_of(d): types(d) for d in pop_all(fifo)}
    assert got["ns/a"] == [DELETED]


def test_requeue_on_error_and_newer_deltas_win():
    fifo = DeltaFIFO()
    fifo.add(obj("a"))

    def fail(deltas):
        raise RequeueError(RuntimeError("try later"))

    with pytest.raises(RuntimeError, match="try later"):
        fifo.pop(fail)
    assert types(fifo.get(obj("a"))) == [ADDED]

    def fail_after_update(deltas):
        fifo.update(obj("a", "2"))  # arrives while processing
        raise RequeueError()

    fifo.pop(fail_after_update)
    assert types(fifo.get(obj("a"))) == [UPDATED]


def test_pop_blocks_until_add_and_close_wakes_it():
    fifo = DeltaFIFO()
    got = []
    ready = threading.Event()

    def consumer():
        ready.set()
        try:
            while True:
                got.append(fifo.pop(lambda d: None))
        except FIFOClosedError:
            got.append("closed")

    t = threading.Thread(target=consumer)
    t.start()
    assert ready.wait(5)
    fifo.add(obj("a"))
    fifo.close()
    t.join(5)
    assert not t.is_alive()
    assert got[-1] == "closed"


def test_pop_timeout_returns_none():
    assert DeltaFIFO().pop(lambda d: None, timeout=0.01) is None


def test_list_and_get():
    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.update(obj("a", "2"))
    assert fifo.list() == [obj("a", "2")]
    assert fifo.list_keys() == ["ns/a"]
    assert fifo.get_by_key("nope") is None
