"""Helpers for tests that need a local cluster.

- ``cluster_fixture(scope="module", backends=..., **kwargs)``: build a pytest fixture, e.g.
  ``cluster = cluster_fixture(kubelet="simulated")`` at module level (a ``LocalCluster`` is
  itself a context manager where a test needs one outside a fixture). With
  ``backends=BACKENDS`` the fixture is parametrised over the control planes, ids ``emulated``
  and ``real``, so each test using it runs on both (``pytest -k real`` picks one).
- ``wait_for(fn, timeout)``: poll until ``fn()`` returns something truthy.
- ``wait_for_pod(api, namespace, name, predicate, timeout)``: ``api`` is ``cluster.client`` (or
  the emulator's ``cluster.registry``).
- ``kubectl(cluster, *args)``: run the real kubectl against the cluster with a
  private HOME (kubectl caches discovery and the server version there).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal, Protocol, cast

from localcluster.cluster import CONTROL_PLANES, LocalCluster

PODS = ("", "v1", "pods")


# The control planes a test can run on (``LocalCluster(control_plane=...)``), as the ids of
# parametrised fixtures.
BACKENDS = CONTROL_PLANES


def cluster_fixture(
    scope: Literal["session", "package", "module", "class", "function"] = "module",
    backends: tuple[str, ...] = ("emulated",),
    **kwargs: Any,
) -> object:
    """A pytest fixture yielding a started ``LocalCluster`` built with ``kwargs``, once per
    control plane in ``backends``."""
    import pytest

    if backends == ("emulated",):  # one control plane: no parameter, test ids unchanged

        @pytest.fixture(scope=scope)
        def _emulated() -> Iterator[LocalCluster]:
            with LocalCluster(**kwargs) as cluster:
                yield cluster

        return _emulated

    @pytest.fixture(scope=scope, params=backends, ids=backends)
    def _cluster(request: Any) -> Iterator[LocalCluster]:
        with LocalCluster(control_plane=request.param, **kwargs) as cluster:
            yield cluster

    return _cluster


def wait_for(
    fn: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05, what: str = ""
) -> Any:
    """Return the first truthy ``fn()``; raise TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = fn()
        except Exception as err:  # noqa: BLE001 - not there yet
            last = err
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out waiting for {what or fn}: last result {last!r}")
        time.sleep(interval)


class ObjectReader(Protocol):
    """Anything that reads one object: a ``ClusterClient`` on either control plane, or the
    emulator's ``Registry``."""

    def get(
        self, gvr: tuple[str, str, str], namespace: str | None, name: str
    ) -> dict[str, Any]: ...


def wait_for_pod(
    api: ObjectReader,
    namespace: str,
    name: str,
    predicate: Callable[[dict[str, Any]], bool],
    timeout: float = 30.0,
) -> dict[str, Any]:
    """The pod once ``predicate(pod)`` holds."""

    def check() -> dict[str, Any] | None:
        pod = api.get(PODS, namespace, name)
        return pod if predicate(pod) else None

    return cast(dict[str, Any], wait_for(check, timeout, what=f"pod {namespace}/{name}"))


def pod_phase_is(*phases: str) -> Callable[[dict[str, Any]], bool]:
    return lambda pod: (pod.get("status") or {}).get("phase") in phases


def kubectl(
    cluster: LocalCluster,
    *args: str,
    timeout: float = 60.0,
    home: str | None = None,
    check: bool = False,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run kubectl with the cluster's kubeconfig and a temporary HOME (or ``home``); text
    output, ``input`` on its stdin. With ``check``, a non-zero exit raises AssertionError
    carrying kubectl's output."""
    with contextlib.ExitStack() as stack:
        if home is None:
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="kubectl-home-"))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "KUBECONFIG": cluster.kubeconfig,
        }
        proc = subprocess.run(
            ["kubectl", *args],
            input=input,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc
