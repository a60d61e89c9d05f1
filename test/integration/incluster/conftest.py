"""The operator deployed from ``manifests/`` into a fresh local cluster with the process
kubelet, as a user deploys it: ``kubectl apply -k``, ``kubectl rollout status``, the
operator's own service account under RBAC, its metrics scraped through its Service.

``InCluster`` wraps one such cluster: applying an overlay, finding the operator pod and its
leader lease, running a TFJob made of real processes, playing a gang scheduler for the gang
overlays, scraping ``/metrics`` the way Prometheus does (Endpoints -> pod IP -> path) and
counting the operator's 403s from the API server's ``apiserver_request_total`` (client
``tf-operator``).

Every cluster runs once on each control plane (ids ``emulated`` and ``real``): the module's
``incluster`` fixture takes ``params=BACKENDS``, a test that starts its own takes
``control_plane`` and ``in_cluster(control_plane, tmp_path)``. On the real control plane the
operator pod's in-cluster configuration reaches the real kube-apiserver (the kubelet is given
its address; the CA comes from ``kube-root-ca.crt``, the token from the TokenRequest API), the
real RBAC authorizer judges it, the requests are counted from kube-apiserver's audit log
(``support.audit``), and ``/metrics`` is scraped at the IP of a pod the Service selects
(kube-apiserver refuses loopback addresses in Endpoints).
"""

from __future__ import annotations

import contextlib
import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.kubelet.dns import probe_mount_namespace
from localcluster.testing import BACKENDS, kubectl, wait_for
from support.audit import AuditLog

ROOT = Path(__file__).resolve().parents[3]
NAMESPACE = "kubeflow"
OPERATOR = "tf-job-operator"
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
ENDPOINTS = ("", "v1", "endpoints")
SERVICES = ("", "v1", "services")
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"

needs_mount_namespaces = pytest.mark.skipif(
    not probe_mount_namespace(),
    reason="the operator's in-cluster config needs the token at its standard path (root)",
)


class InCluster:
    def __init__(self, cluster: LocalCluster, audit: AuditLog | None = None) -> None:
        self.cluster = cluster
        self.client = cluster.client
        self.audit = audit  # the real control plane's request log

    def kubectl(self, *args: str, check: bool = True):
        return kubectl(self.cluster, *args, check=check, timeout=120)

    def apply(self, overlay: str | Path) -> str:
        """``kubectl apply -k`` a shipped overlay (by name) or a kustomization directory."""
        target = overlay if isinstance(overlay, Path) else ROOT / "manifests/overlays" / overlay
        return self.kubectl("apply", "-k", str(target)).stdout

    def rollout(self, namespace: str = NAMESPACE, timeout: str = "90s") -> str:
        return self.kubectl(
            "rollout", "status", f"deployment/{OPERATOR}", "-n", namespace, f"--timeout={timeout}"
        ).stdout

    def logs(self, namespace: str, pod: str) -> str:
        """``kubectl logs`` of the pod (on the real control plane kube-apiserver asks the
        kubelets' HTTPS server)."""
        return self.kubectl("logs", "-n", namespace, pod).stdout

    def operator_pods(self, namespace: str = NAMESPACE) -> list[dict]:
        pods = self.client.list(PODS, namespace, label_selector=f"name={OPERATOR}").items
        return [p for p in pods if not p["metadata"].get("deletionTimestamp")]

    def leader(self, namespace: str = NAMESPACE) -> str | None:
        """The holder of the operator's leader lock (an Endpoints, as v0.5.3)."""
        try:
            lock = self.client.get(ENDPOINTS, namespace, "tf-operator")
        except Exception:  # noqa: BLE001 - not created yet
            return None
        record = (lock["metadata"].get("annotations") or {}).get(LEADER_ANNOTATION)
        return json.loads(record).get("holderIdentity") if record else None

    def submit_job(
        self, name: str, namespace: str = "default", priority_class: str | None = None
    ) -> None:
        """A TFJob of 1 PS + 2 workers whose containers are real processes (their pods of
        ``priority_class`` if given)."""
        ps = [sys.executable, "-c", "import time; time.sleep(3600)"]
        worker = [
            sys.executable,
            "-c",
            "import json, os; print(json.loads(os.environ['TF_CONFIG'])['task'])",
        ]
        specs = {
            rtype: {
                "replicas": replicas,
                "restartPolicy": "Never",
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "tensorflow",
                                "image": "tensorflow/tensorflow:1.13.1",
                                "command": command,
                            }
                        ]
                    }
                },
            }
            for rtype, replicas, command in (("PS", 1, ps), ("Worker", 2, worker))
        }
        if priority_class:
            for spec in specs.values():
                spec["template"]["spec"]["priorityClassName"] = priority_class
        job = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": name},
            "spec": {"tfReplicaSpecs": specs},
        }
        self.client.create(TFJOBS, namespace, job)

    def wait_succeeded(self, name: str, namespace: str = "default", timeout: float = 90) -> dict:
        return wait_for(
            lambda: self._succeeded(name, namespace), timeout, what=f"TFJob {name} Succeeded"
        )

    def run_job(self, name: str, namespace: str = "default", timeout: float = 90) -> dict:
        self.submit_job(name, namespace)
        return self.wait_succeeded(name, namespace, timeout)

    def _succeeded(self, name: str, namespace: str) -> dict | None:
        job = self.client.get(TFJOBS, namespace, name)
        conditions = (job.get("status") or {}).get("conditions") or []
        return (
            job
            if any(c["type"] == "Succeeded" and c["status"] == "True" for c in conditions)
            else None
        )

    def play_gang_scheduler(self, job: str, namespace: str, members: int, timeout: float) -> None:
        """Bind the gang's pods together once all exist (unless a batch scheduler already did)."""

        def gang():
            pods = self.client.list(PODS, namespace, label_selector=f"tf-job-name={job}").items
            return pods if len(pods) == members else None

        node = self.cluster.node_names[0]
        for pod in wait_for(gang, timeout, what=f"the {members} pods of {job}"):
            if pod["spec"].get("nodeName"):
                continue
            try:
                self.client.bind(namespace, pod["metadata"]["name"], node)
            except Exception as err:  # noqa: BLE001 - bound meanwhile by a real batch scheduler
                assert getattr(err, "code", None) == 409, err

    def scrape(self, namespace: str = NAMESPACE, service: str = OPERATOR) -> str:
        """GET /metrics from a ready endpoint of the Service, as Prometheus would (on the real
        control plane, which keeps no loopback endpoints, from a ready pod it selects)."""

        def addresses():
            if self.cluster.control_plane == "real":
                return self._ready_pod_addresses(namespace, service) or None
            endpoints = self.client.get(ENDPOINTS, namespace, service)
            found = [
                (a["ip"], p["port"])
                for subset in endpoints.get("subsets") or []
                for a in subset.get("addresses") or []
                for p in subset.get("ports") or []
            ]
            return found or None

        ip, port = wait_for(addresses, 60, what=f"ready endpoints of {service}")[0]
        with urllib.request.urlopen(f"http://{ip}:{port}/metrics", timeout=10) as resp:
            return resp.read().decode()

    def _ready_pod_addresses(self, namespace: str, service: str) -> list[tuple[str, int]]:
        """(pod IP, target port) of the ready pods the Service selects: its endpoints."""
        svc = self.client.get(SERVICES, namespace, service)
        selector = ",".join(f"{k}={v}" for k, v in (svc["spec"].get("selector") or {}).items())
        pods = self.client.list(PODS, namespace, label_selector=selector).items
        found = []
        for pod in pods:
            status = pod.get("status") or {}
            ready = any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in status.get("conditions") or []
            )
            if not ready or not status.get("podIP"):
                continue
            for port in svc["spec"].get("ports") or []:
                target = port.get("targetPort", port["port"])
                if isinstance(target, str):  # a named container port
                    target = next(
                        p["containerPort"]
                        for c in pod["spec"]["containers"]
                        for p in c.get("ports") or []
                        if p.get("name") == target
                    )
                found.append((status["podIP"], int(target)))
        return found

    def operator_responses(self, code: int, verb: str = "", resource: str = "") -> int:
        """How many requests of the operator got ``code`` so far (only those of ``verb`` on
        ``resource`` when given)."""
        if self.audit is not None:
            return self.audit.responses("tf-operator", code, verb, resource)
        counts = self.cluster.server.request_metrics.snapshot()
        return sum(
            n
            for (client, v, res, status), n in counts.items()
            if client == "tf-operator"
            and status == code
            and verb in ("", v)
            and resource in ("", res)
        )


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"metric {name} not found in:\n{text}")


@contextlib.contextmanager
def in_cluster(control_plane: str, directory: Path, **kwargs: object) -> Iterator[InCluster]:
    """A process-kubelet cluster on ``control_plane`` (its audit log under ``directory`` on the
    real one), wrapped in :class:`InCluster`."""
    audit = AuditLog(directory / "audit") if control_plane == "real" else None
    with LocalCluster(
        control_plane=control_plane,
        kubelet="process",
        apiserver_args=audit.apiserver_args if audit is not None else (),
        **kwargs,  # type: ignore[arg-type]
    ) as cluster:
        yield InCluster(cluster, audit)


@pytest.fixture(params=BACKENDS)
def control_plane(request) -> str:
    """The control plane of a cluster the test starts itself."""
    return str(request.param)


@pytest.fixture(scope="module", params=BACKENDS)
def incluster(request, tmp_path_factory) -> Iterator[InCluster]:
    directory = tmp_path_factory.mktemp("incluster")
    timing = SimulatedTiming(restart_delay=0.5)
    with in_cluster(request.param, directory, simulated=timing) as cluster:
        yield cluster
