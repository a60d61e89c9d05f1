"""The operator deployed from ``manifests/`` into a fresh local cluster with the process
kubelet, as a user deploys it: ``kubectl apply -k``, ``kubectl rollout status``, the
operator's own service account under RBAC, its metrics scraped through its Service.

``InCluster`` wraps one such cluster: applying an overlay, finding the operator pod and its
leader lease, running a TFJob made of real processes, playing a gang scheduler for the gang
overlays, scraping ``/metrics`` the way Prometheus does (Endpoints -> pod IP -> path) and
counting the operator's 403s from the API server's ``apiserver_request_total`` (client
``tf-operator``).
"""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.kubelet.dns import probe_mount_namespace
from localcluster.testing import kubectl, wait_for

ROOT = Path(__file__).resolve().parents[3]
NAMESPACE = "kubeflow"
OPERATOR = "tf-job-operator"
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
ENDPOINTS = ("", "v1", "endpoints")
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"

needs_mount_namespaces = pytest.mark.skipif(
    not probe_mount_namespace(),
    reason="the operator's in-cluster config needs the token at its standard path (root)",
)


class InCluster:
    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.registry = cluster.registry

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

    def operator_pods(self, namespace: str = NAMESPACE) -> list[dict]:
        pods, _ = self.registry.list(PODS, namespace, label_selector=f"name={OPERATOR}")
        return [p for p in pods if not p["metadata"].get("deletionTimestamp")]

    def leader(self, namespace: str = NAMESPACE) -> str | None:
        """The holder of the operator's leader lock (an Endpoints, as v0.5.3)."""
        try:
            lock = self.registry.get(ENDPOINTS, namespace, "tf-operator")
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
        self.registry.create(TFJOBS, namespace, job)

    def wait_succeeded(self, name: str, namespace: str = "default", timeout: float = 90) -> dict:
        return wait_for(
            lambda: self._succeeded(name, namespace), timeout, what=f"TFJob {name} Succeeded"
        )

    def run_job(self, name: str, namespace: str = "default", timeout: float = 90) -> dict:
        self.submit_job(name, namespace)
        return self.wait_succeeded(name, namespace, timeout)

    def _succeeded(self, name: str, namespace: str) -> dict | None:
        job = self.registry.get(TFJOBS, namespace, name)
        conditions = (job.get("status") or {}).get("conditions") or []
        return (
            job
            if any(c["type"] == "Succeeded" and c["status"] == "True" for c in conditions)
            else None
        )

    def play_gang_scheduler(self, job: str, namespace: str, members: int, timeout: float) -> None:
        """Bind the gang's pods together once all exist (unless a batch scheduler already did)."""

        def gang():
            pods, _ = self.registry.list(PODS, namespace, label_selector=f"tf-job-name={job}")
            return pods if len(pods) == members else None

        node = self.cluster.node_names[0]
        for pod in wait_for(gang, timeout, what=f"the {members} pods of {job}"):
            if pod["spec"].get("nodeName"):
                continue
            try:
                self.registry.bind_pod(namespace, pod["metadata"]["name"], node)
            except Exception as err:  # noqa: BLE001 - bound meanwhile by a real batch scheduler
                assert getattr(err, "code", None) == 409, err

    def scrape(self, namespace: str = NAMESPACE, service: str = OPERATOR) -> str:
        """GET /metrics from every ready endpoint of the Service, as Prometheus would."""

        def addresses():
            endpoints = self.registry.get(ENDPOINTS, namespace, service)
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

    def operator_responses(self, code: int, verb: str = "", resource: str = "") -> int:
        """How many requests of the operator got ``code`` so far (only those of ``verb`` on
        ``resource`` when given)."""
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


@pytest.fixture(scope="module")
def incluster() -> Iterator[InCluster]:
    with LocalCluster(kubelet="process", simulated=SimulatedTiming(restart_delay=0.5)) as cluster:
        yield InCluster(cluster)
