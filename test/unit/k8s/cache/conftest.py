import threading

import pytest

from tf_operator.k8s.cache import Backoff


class RecordingStore:
    """A store double for reflector tests: records every call, lets tests wait on them."""

    def __init__(self):
        self.cond = threading.Condition()
        self.calls = []  # (op, payload)
        self.objects = {}
        self.resyncs = 0

    def _record(self, op, payload):
        with self.cond:
            self.calls.append((op, payload))
            self.cond.notify_all()

    @staticmethod
    def _key(o):
        m = o["metadata"]
        return f"{m.get('namespace', '')}/{m['name']}"

    def add(self, o):
        self.objects[self._key(o)] = o
        self._record("add", o["metadata"]["name"])

    def update(self, o):
        self.objects[self._key(o)] = o
        self._record("update", o["metadata"]["name"])

    def delete(self, o):
        self.objects.pop(self._key(o), None)
        self._record("delete", o["metadata"]["name"])

    def replace(self, items, rv):
        self.objects = {self._key(o): o for o in items}
        self._record("replace", (sorted(o["metadata"]["name"] for o in items), rv))

    def resync(self):
        with self.cond:
            self.resyncs += 1
            self.cond.notify_all()

    def wait_for(self, pred, timeout=5.0):
        with self.cond:
            assert self.cond.wait_for(lambda: pred(self), timeout), f"timed out; calls={self.calls}"

    def ops(self, op):
        with self.cond:
            return [p for o, p in self.calls if o == op]


@pytest.fixture
def recording_store():
    return RecordingStore()


@pytest.fixture
def fast_backoff():
    return Backoff(initial=0.001, maximum=0.01)


@pytest.fixture
def stop_event():
    ev = threading.Event()
    yield ev
    ev.set()
