"""Fixtures for operator integration tests: a local cluster in this process and the REAL
``tf-operator`` binary in a subprocess pointed at it.

``sim_cluster`` (simulated kubelet: pods are timers driven by annotations) and
``proc_cluster`` (process kubelet: containers are local processes) are module-scoped, have
the TFJob CRD installed, and run once on each control plane (ids ``emulated`` and ``real``:
the API-server emulator, and etcd with Kubernetes' own servers). ``operators`` starts
``tf-operator`` processes and stops them after the test. ``Api`` wraps the cluster's client
(the same on both control planes) with TFJob helpers and waits.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from localcluster import testing
from localcluster.testing import BACKENDS
from support.crd import crd_objects
from support.operator_process import OperatorExited, OperatorProcess

TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
EVENTS = ("", "v1", "events")
NS = "default"
# Short leader-election timings so failover tests stay quick (renew > 1.2 x retry).
FAST_ELECTION = [
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
]


def wait_for(fn: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``fn`` until it returns something truthy; fail the test after ``timeout`` s."""
    try:
        return testing.wait_for(fn, timeout=timeout, what=what)
    except TimeoutError as err:
        pytest.fail(str(err))


class Operator(OperatorProcess):
    """One ``tf-operator`` process (see :class:`OperatorProcess`) with test-failing waits."""

    def wait_log(self, pattern: str, timeout: float = 30.0) -> re.Match:
        try:
            return super().wait_log(pattern, timeout)
        except (OperatorExited, TimeoutError) as err:
            pytest.fail(str(err))

    def is_leader(self) -> bool:
        try:
            return self.metric("tf_operator_is_leader") == 1.0
        except OSError:
            return False


class Api:
    """TFJob helpers over a LocalCluster's client (tests get it as ``sim`` or ``proc``)."""

    wait_for = staticmethod(wait_for)

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.client = cluster.client
        self.kubeconfig = cluster.kubeconfig
        self.control_plane: str = cluster.control_plane

    @staticmethod
    def job(name: str, replicas: dict[str, dict], **spec: Any) -> dict:
        return tfjob(name, replicas, **spec)

    @staticmethod
    def python(code: str) -> list[str]:
        return python(code)

    def create(self, job: dict, namespace: str = NS) -> dict:
        return self.client.create(TFJOBS, namespace, job)

    def get(self, name: str, namespace: str = NS) -> dict:
        return self.client.get(TFJOBS, namespace, name)

    def exists(self, name: str, namespace: str = NS) -> bool:
        items = self.client.list(TFJOBS, namespace).items
        return any(i["metadata"]["name"] == name for i in items)

    def pods(self, job: str, namespace: str = NS) -> list[dict]:
        items = self.client.list(PODS, namespace, label_selector=f"tf-job-name={job}").items
        return sorted(items, key=lambda p: p["metadata"]["name"])

    def services(self, job: str, namespace: str = NS) -> list[dict]:
        return self.client.list(SERVICES, namespace, label_selector=f"tf-job-name={job}").items

    def events(self, name: str, namespace: str = NS) -> list[dict]:
        items = self.client.list(EVENTS, namespace).items
        return [e for e in items if e.get("involvedObject", {}).get("name") == name]

    def condition(self, name: str, ctype: str, namespace: str = NS) -> dict | None:
        for cond in (self.get(name, namespace).get("status") or {}).get("conditions") or []:
            if cond["type"] == ctype and cond["status"] == "True":
                return cond
        return None

    def wait_condition(self, name: str, ctype: str, timeout: float = 30.0) -> dict:
        return wait_for(lambda: self.condition(name, ctype), timeout, f"{name} {ctype}")

    def log(self, pod: str, container: str = "tensorflow", namespace: str = NS) -> str:
        chunks = self.cluster._logs(namespace, pod, container)
        return b"".join(chunks).decode(errors="replace")


def tfjob(name: str, replicas: dict[str, dict], **spec: Any) -> dict:
    """A TFJob with one ``tensorflow`` container per replica type.

    ``replicas`` maps a replica type to keys: ``replicas`` (default 1), ``restartPolicy``,
    ``command`` (list), ``annotations`` (pod template), ``container`` (extra container keys).
    """
    specs = {}
    for rtype, opts in replicas.items():
        container = {"name": "tensorflow", "image": "localcluster/none"}
        if "command" in opts:
            container["command"] = opts["command"]
        container.update(opts.get("container", {}))
        template: dict = {"spec": {"containers": [container]}}
        if opts.get("annotations"):
            template["metadata"] = {"annotations": opts["annotations"]}
        specs[rtype] = {"replicas": opts.get("replicas", 1), "template": template}
        if "restartPolicy" in opts:
            specs[rtype]["restartPolicy"] = opts["restartPolicy"]
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {**spec, "tfReplicaSpecs": specs},
    }


def python(code: str) -> list[str]:
    """A container command running ``code`` with this interpreter."""
    return [sys.executable, "-c", code]


@pytest.fixture(scope="module", params=BACKENDS)
def sim_cluster(request) -> Iterator[Any]:
    from localcluster.cluster import LocalCluster, SimulatedTiming

    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.2),
        crds=crd_objects(),
    ) as c:
        yield c


@pytest.fixture(scope="module", params=BACKENDS)
def proc_cluster(request) -> Iterator[Any]:
    from localcluster.cluster import LocalCluster

    with LocalCluster(control_plane=request.param, kubelet="process", crds=crd_objects()) as c:
        yield c


@pytest.fixture(scope="module")
def sim(sim_cluster) -> Api:
    return Api(sim_cluster)


@pytest.fixture(scope="module")
def proc(proc_cluster) -> Api:
    return Api(proc_cluster)


@pytest.fixture
def operators(tmp_path) -> Iterator[Callable[..., Operator]]:
    """Factory: ``operators(cluster, *args, env=None)`` starts a tf-operator process."""
    started: list[Operator] = []

    def start(cluster: Any, *args: str, env: dict | None = None) -> Operator:
        """``cluster`` is a LocalCluster or an Api (anything with ``kubeconfig``)."""
        op = Operator(
            cluster.kubeconfig, tmp_path / f"operator-{len(started)}.log", list(args), env
        )
        started.append(op)
        return op

    yield start
    for op in started:
        op.stop()


@pytest.fixture(scope="module")
def module_operator(request, tmp_path_factory) -> Iterator[Callable[[Any], Operator]]:
    """One operator per module and cluster (started on first use)."""
    started: dict[int, Operator] = {}

    def get(cluster: Any, *args: str) -> Operator:
        """``cluster`` is a LocalCluster or an Api; ``args`` count only on first use."""
        if id(cluster) not in started:
            log = tmp_path_factory.mktemp("operator") / "operator.log"
            started[id(cluster)] = Operator(cluster.kubeconfig, log, list(args))
        return started[id(cluster)]

    yield get
    for op in started.values():
        op.stop()
