"""Fixtures shared by the client-go tests that talk to the local API server emulator over HTTP.

``apiserver_kube`` starts one emulator per test module and yields a real HTTP ``KubeClient``
for it; ``poll_until`` waits on a condition (there are no watch hooks to block on from outside).
"""

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tf_operator.k8s.client import load_kube_client


def _poll_until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.01)


@pytest.fixture
def poll_until() -> Callable[..., None]:
    """``poll_until(predicate, timeout=10.0)``: fail the test unless ``predicate()`` holds in time."""
    return _poll_until


@pytest.fixture(scope="module")
def apiserver_kube() -> Iterator[object]:
    """An HTTP client for a fresh API server emulator, shared by the tests of one module."""
    from localcluster.controlplane.emulated import APIServer

    server = APIServer(host="127.0.0.1", port=0)
    server.start()
    client = load_kube_client(master=server.url)
    yield client
    client.close()
    server.stop()
