"""Fixtures for reliability tests: a private local cluster per test, the REAL ``tf-operator``
process against it, fault injection over the API server's admin endpoint, and a lossless
record of every pod the cluster ever held.

``PodLedger`` hooks the registry's commit path (a ``commit_observers`` entry, called once per
committed change, in resourceVersion order, with the registry lock held). A watch
would not do: fault injection drops watches and compaction makes a rewatch fail with 410, so
a watch-based observer could miss a short-lived duplicate. A pod counts as live from its
creation until it is deleted, gets a deletionTimestamp or reaches a terminal phase; two live
pods for one (namespace, job, replica type, index) are recorded as a violation.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from localcluster import testing
from support.crd import install_crds
from support.operator_process import OperatorExited, OperatorProcess

TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
NS = "default"
RUN_SECONDS = "localcluster.tf-operator.io/run-seconds"
FAULTS_PATH = "/_localcluster/faults"
NO_FAULTS = {"error_rate": 0.0, "error_code": 500, "retry_after": 1, "latency_ms": 0}

PodKey = tuple[str, str, str, str]  # (namespace, job, replica type, index)


def wait_for(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``fn`` until it returns something truthy; fail the test after ``timeout`` s."""
    try:
        return testing.wait_for(fn, timeout=timeout, what=what)
    except TimeoutError as err:
        pytest.fail(str(err))


# ---------------------------------------------------------------- pod ledger


def _is_live(pod: dict) -> bool:
    meta = pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase")
    return not meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed")


class PodLedger:
    """Every pod commit, in order: live pods per key, creations per key, violations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.live: dict[PodKey, set[str]] = defaultdict(set)
        self.created: Counter[PodKey] = Counter()
        self.violations: list[str] = []
        self._key_of_uid: dict[str, PodKey] = {}

    @staticmethod
    def key_of(pod: dict) -> PodKey | None:
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if "tf-job-name" not in labels:
            return None
        return (
            meta.get("namespace", ""),
            labels["tf-job-name"],
            labels.get("tf-replica-type", "?"),
            labels.get("tf-replica-index", "?"),
        )

    def observe(self, etype: str, pod: dict) -> None:
        key = self.key_of(pod)
        if key is None:
            return
        uid = (pod.get("metadata") or {}).get("uid", "")
        with self._lock:
            previous = self._key_of_uid.get(uid)
            if previous is not None and previous != key:
                self.live[previous].discard(uid)  # relabelled: it left its old key
            self._key_of_uid[uid] = key
            live = self.live[key]
            if etype == "ADDED":
                self.created[key] += 1
            if etype != "DELETED" and _is_live(pod):
                if uid not in live and live:
                    self.violations.append(f"{key}: {uid} live while {sorted(live)} live")
                live.add(uid)
            else:
                live.discard(uid)

    def creations(self, job: str) -> dict[PodKey, int]:
        with self._lock:
            return {k: n for k, n in self.created.items() if k[1] == job}

    def install(self, registry: Any) -> Callable[[], None]:
        """Hook the registry's commit path; returns the function that unhooks it."""

        def observe(rt: Any, ev: Any) -> None:
            if getattr(rt, "plural", None) == "pods" and not getattr(rt, "group", ""):
                try:
                    self.observe(ev.type, ev.obj)
                except Exception as err:  # noqa: BLE001 - never break the registry
                    self.violations.append(f"ledger error: {err!r}")

        registry.commit_observers.append(observe)
        return lambda: registry.commit_observers.remove(observe)


# ---------------------------------------------------------------- operator process


class Operator(OperatorProcess):
    """A ``tf-operator`` process (without leader election unless ``elected``), with
    test-failing waits."""

    def __init__(
        self, kubeconfig: str, log_path: Path, args: list[str], elected: bool = False
    ) -> None:
        super().__init__(kubeconfig, log_path, args if elected else ["--no-leader-elect", *args])

    def is_leader(self) -> bool:
        try:
            return self.metric("tf_operator_is_leader") == 1.0
        except OSError:
            return False

    def wait_log(self, pattern: str, timeout: float = 20.0) -> re.Match:
        try:
            return super().wait_log(pattern, timeout)
        except (OperatorExited, TimeoutError) as err:
            pytest.fail(str(err))


# ---------------------------------------------------------------- cluster helpers


class Env:
    """One test's cluster, ledger and operators, with helpers over the admin endpoints."""

    wait_for = staticmethod(wait_for)

    def __init__(self, cluster: Any, ledger: PodLedger, tmp_path: Path) -> None:
        self.cluster = cluster
        self.registry = cluster.registry
        self.ledger = ledger
        self._tmp = tmp_path
        self.operators: list[Operator] = []
        config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
        self._token = config["users"][0]["user"].get("token", "")

    def operator(self, *args: str, elected: bool = False, kubeconfig: str = "") -> Operator:
        """A ``tf-operator`` process; ``elected`` runs it under leader election; ``kubeconfig``
        (default: the cluster's admin one) e.g. from :meth:`service_account_kubeconfig`."""
        op = Operator(
            kubeconfig or self.cluster.kubeconfig,
            self._tmp / f"operator-{len(self.operators)}.log",
            list(args),
            elected,
        )
        self.operators.append(op)
        return op

    def _http(self, method: str, path: str, body: dict | None = None) -> bytes:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.cluster.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self._token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.read()

    def service_account_kubeconfig(self, name: str) -> tuple[str, str]:
        """A kubeconfig authenticating as a new cluster-admin ServiceAccount ``name`` of the
        default namespace, and that account's user name: operators given different ones
        can be told apart by the API server (``localcluster.controlplane.emulated.request_user``)."""
        self.registry.create(("", "v1", "serviceaccounts"), NS, {"metadata": {"name": name}})
        binding = {
            "metadata": {"name": f"{name}-admin"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NS}],
        }
        self.registry.create(
            ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), "", binding
        )
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        path = f"/api/v1/namespaces/{NS}/serviceaccounts/{name}/token"
        token = json.loads(self._http("POST", path, request))["status"]["token"]
        config = yaml.safe_load(Path(self.cluster.kubeconfig).read_text())
        config["users"][0]["user"] = {"token": token}
        path_out = self._tmp / f"{name}.kubeconfig"
        path_out.write_text(yaml.safe_dump(config))
        return str(path_out), f"system:serviceaccount:{NS}:{name}"

    def faults(self, **settings: Any) -> dict:
        """POST the fault settings (and one-shot actions) to the API server."""
        return json.loads(self._http("POST", FAULTS_PATH, settings))

    def operator_requests(self) -> Counter[tuple[str, str, int]]:
        """``apiserver_request_total`` of client ``tf-operator`` by (verb, resource, code),
        read over ``GET /metrics`` (call with error injection off)."""
        text = self._http("GET", "/metrics").decode()
        counts: Counter[tuple[str, str, int]] = Counter()
        for line in text.splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}", 1)[0]))
            if labels.get("client") == "tf-operator":
                key = (labels["verb"], labels["resource"], int(labels["code"]))
                counts[key] += int(float(line.rsplit(" ", 1)[1]))
        return counts

    # -- TFJobs --------------------------------------------------------------------------
    def create_job(self, name: str, workers: int = 3, run_seconds: float = 2.0) -> dict:
        """1 PS (runs until deleted) + ``workers`` workers that exit 0 after ``run_seconds``."""
        return self.registry.create(TFJOBS, NS, self.job_body(name, workers, run_seconds))

    @staticmethod
    def job_body(name: str, workers: int = 3, run_seconds: float = 2.0) -> dict:
        """The TFJob ``create_job`` creates."""
        container = {"name": "tensorflow", "image": "localcluster/none"}
        job = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": name},
            "spec": {
                "tfReplicaSpecs": {
                    "PS": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
                    "Worker": {
                        "replicas": workers,
                        "template": {
                            "metadata": {"annotations": {RUN_SECONDS: str(run_seconds)}},
                            "spec": {"containers": [container]},
                        },
                    },
                }
            },
        }
        return job

    def patch_job(self, name: str, patch: dict) -> dict:
        """A merge patch of the TFJob (in-process, so untouched by injected faults)."""
        return self.registry.patch(TFJOBS, NS, name, patch, "merge")

    def get_job(self, name: str) -> dict:
        return self.registry.get(TFJOBS, NS, name)

    def condition(self, name: str, ctype: str) -> bool:
        conditions = (self.get_job(name).get("status") or {}).get("conditions") or []
        return any(c["type"] == ctype and c["status"] == "True" for c in conditions)

    def wait_succeeded(self, names: list[str], timeout: float) -> None:
        def pending() -> list[str]:
            for op in self.operators[-1:]:
                if not op.alive():
                    pytest.fail(f"operator died:\n{op.text()[-3000:]}")
            return [n for n in names if not self.condition(n, "Succeeded")]

        try:
            testing.wait_for(lambda: not pending(), timeout=timeout, what="jobs to succeed")
        except TimeoutError as err:
            pytest.fail(f"{err}\n{self.report(pending())}")

    def report(self, jobs: list[str]) -> str:
        """What a stuck run looks like: the jobs' status and pods, the operator's log lines
        counted by message, the last lines, and every operator thread's stack."""
        lines = []
        for name in jobs:
            status = self.get_job(name).get("status") or {}
            conditions = [
                c["type"] for c in status.get("conditions") or [] if c["status"] == "True"
            ]
            pods = Counter(
                (
                    p["metadata"]["labels"].get("tf-replica-type"),
                    (p.get("status") or {}).get("phase"),
                )
                for p in self.pods()
                if p["metadata"]["labels"].get("tf-job-name") == name
            )
            lines.append(f"{name}: conditions {conditions}, pods {dict(pods)}")
        for op in self.operators[-1:]:
            log_lines = op.text().splitlines()
            messages = Counter(str(record.get("msg"))[:70] for record in op.json_logs())
            lines.append("operator log, by message:")
            lines += [f"  {n:5d} {m}" for m, n in messages.most_common(25)]
            lines.append("last lines:")
            lines += [f"  {line[:240]}" for line in log_lines[-15:]]
            lines.append("threads:\n" + op.stacks())
        return "\n".join(lines)

    def pods(self) -> list[dict]:
        items, _ = self.registry.list(PODS, NS)
        return items

    def assert_one_pod_per_index(
        self, names: list[str], workers: int = 3, every_index: bool = True
    ) -> None:
        """No two live pods ever shared an index and no index got a second pod; each index
        got one, or with ``every_index=False`` at least PS 0 and worker 0 (a job succeeds
        when worker 0 does, so a worker whose create was refused may never be retried)."""
        assert self.ledger.violations == []
        for name in names:
            created = self.ledger.creations(name)
            expected = {(NS, name, "ps", "0")} | {
                (NS, name, "worker", str(i)) for i in range(workers)
            }
            if every_index:
                assert set(created) == expected, f"{name}: pods for {sorted(created)}"
            else:
                assert set(created) <= expected, f"{name}: pods for {sorted(created)}"
                assert {(NS, name, "ps", "0"), (NS, name, "worker", "0")} <= set(created)
            recreated = {k: n for k, n in created.items() if n != 1}
            assert recreated == {}, f"{name}: pods created more than once: {recreated}"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    """A fresh simulated cluster with the CRD, a pod ledger and an operator factory."""
    from localcluster.cluster import LocalCluster, SimulatedTiming

    with LocalCluster(kubelet="simulated", simulated=SimulatedTiming(start_delay=0.2)) as c:
        install_crds(c.registry)
        ledger = PodLedger()
        unhook = ledger.install(c.registry)
        e = Env(c, ledger, tmp_path)
        try:
            yield e
        finally:
            for op in e.operators:
                op.stop()
            unhook()
