"""Runs of the real ``tf-operator`` under its manifests' service account with chosen RBAC
rules, to prove the shipped role is least privilege.

A run creates a fresh namespace holding the ``tf-job-operator`` ServiceAccount, binds it to the
rules under test (a ClusterRole for the cluster-wide operator, a Role for ``--namespace``),
starts the operator binary with a kubeconfig carrying a token from the TokenRequest API
(the identity an in-cluster pod gets; a host process starts faster than a pod) and walks a
scenario that makes the operator perform each operation its role allows: informers and
leader election (fast renewals), a TFJob's pods and services, adoption of a pod and a service
whose owner reference was removed, a service deleted twice (the repeated
``SuccessfulCreateService`` event is a patch), a PodGroup resized (gang), and the job finishing
(cleanup deletes, the PodGroup deleted, TTL deletion of the job). The pods never run: the test writes their status,
as envtest would, so a run takes seconds. With ``stop_on`` a run ends as soon as the API
server denies that operation.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from localcluster.controlplane.emulated.auth.tokenrequest import create_token
from localcluster.controlplane.emulated.auth.user import service_account_username
from localcluster.testing import wait_for

ROOT = Path(__file__).resolve().parents[3]
RBAC = "rbac.authorization.k8s.io"
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
ENDPOINTS = ("", "v1", "endpoints")
LEASES = ("coordination.k8s.io", "v1", "leases")
OPERATOR_SA = "tf-job-operator"
JOB = "lp"
FAST_ELECTION = [
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
]

Triple = tuple[str, str, str]  # (verb, API group, resource[/subresource])

# What the operator does with each permission (the operation a 403 breaks).
OPERATIONS: dict[Triple, str] = {
    ("list", "kubeflow.org", "tfjobs"): "start-up CRD check and the TFJob informer's list",
    ("watch", "kubeflow.org", "tfjobs"): "the TFJob informer's watch",
    ("get", "kubeflow.org", "tfjobs"): "re-reading a job before adopting an orphan pod or service",
    ("delete", "kubeflow.org", "tfjobs"): "deleting a finished job after ttlSecondsAfterFinished",
    ("update", "kubeflow.org", "tfjobs/status"): "writing a job's status",
    ("list", "", "pods"): "the pod informer's list",
    ("watch", "", "pods"): "the pod informer's watch",
    ("create", "", "pods"): "creating a replica's pod",
    ("delete", "", "pods"): "deleting pods at cleanup (cleanPodPolicy), by UID from the cache",
    ("patch", "", "pods"): "adopting an orphan pod (owner reference)",
    ("list", "", "services"): "the service informer's list",
    ("watch", "", "services"): "the service informer's watch",
    ("create", "", "services"): "creating a replica's headless service",
    ("delete", "", "services"): "deleting services at cleanup",
    ("patch", "", "services"): "adopting an orphan service (owner reference)",
    ("create", "", "events"): "recording an event",
    ("patch", "", "events"): "counting a repeated event",
    ("get", "", "endpoints"): "leader election: reading the Endpoints lock",
    ("create", "", "endpoints"): "leader election: creating the Endpoints lock",
    ("update", "", "endpoints"): "leader election: renewing the Endpoints lock",
    ("get", "coordination.k8s.io", "leases"): "leader election: reading the Lease lock",
    ("create", "coordination.k8s.io", "leases"): "leader election: creating the Lease lock",
    ("update", "coordination.k8s.io", "leases"): "leader election: renewing the Lease lock",
    ("get", "scheduling.incubator.k8s.io", "podgroups"): "reading a job's PodGroup",
    ("list", "scheduling.incubator.k8s.io", "podgroups"): "the PodGroup informer's list",
    ("watch", "scheduling.incubator.k8s.io", "podgroups"): "the PodGroup informer's watch",
    ("create", "scheduling.incubator.k8s.io", "podgroups"): "creating a job's PodGroup",
    ("patch", "scheduling.incubator.k8s.io", "podgroups"): "resizing a PodGroup (minMember)",
    ("delete", "scheduling.incubator.k8s.io", "podgroups"): "deleting a finished job's PodGroup",
}


def triples(rules: list[dict]) -> list[Triple]:
    return [
        (verb, group, resource)
        for rule in rules
        for group in rule.get("apiGroups") or []
        for resource in rule.get("resources") or []
        for verb in rule.get("verbs") or []
    ]


def without(rules: list[dict], removed: Triple) -> list[dict]:
    """``rules`` with one (verb, group, resource) taken out, everything else kept."""
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
        for verb, group, resource in triples(rules)
        if (verb, group, resource) != removed
    ]


def manifest_rules(path: str) -> list[dict]:
    return yaml.safe_load((ROOT / "manifests" / path).read_text())["rules"]


def component_rules(component: str) -> list[dict]:
    """The rules a gang component's kustomization appends to the operator's role (its target
    ``ClusterRole|Role``: the ClusterRole, or the namespaced overlay's Role)."""
    doc = yaml.safe_load(
        (ROOT / "manifests/components" / component / "kustomization.yaml").read_text()
    )
    rules = []
    for patch in doc.get("patches") or []:
        if "ClusterRole" in patch["target"]["kind"].split("|"):
            rules += [
                op["value"] for op in yaml.safe_load(patch["patch"]) if op["path"] == "/rules/-"
            ]
    return rules


@dataclass
class RunResult:
    decisions: dict[tuple[str, str, str, bool], int]
    stopped_early: bool
    log: str

    def allowed(self) -> set[Triple]:
        return {(v, g, r) for (v, g, r, ok), n in self.decisions.items() if ok and n}

    def denied(self) -> set[Triple]:
        return {(v, g, r) for (v, g, r, ok), n in self.decisions.items() if not ok and n}


class RoleRun:
    """One operator process bound to ``rules`` in namespace ``ns`` (see module docstring)."""

    def __init__(
        self,
        cluster,
        ns: str,
        rules: list[dict],
        scope: str,
        tmp: Path,
        gang: bool = False,
        lock: str = "endpoints",
    ) -> None:
        self.cluster = cluster
        self.reg = cluster.registry
        self.ns = ns
        self.rules = rules
        self.scope = scope
        self.tmp = tmp
        self.gang = gang
        self.lock = lock
        self.user = service_account_username(ns, OPERATOR_SA)
        self.proc: subprocess.Popen | None = None
        self.podgroups = ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups")

    # -- set-up ---------------------------------------------------------------------

    def _setup(self) -> str:
        reg = self.reg
        reg.create(("", "v1", "namespaces"), None, {"metadata": {"name": self.ns}})
        reg.create(("", "v1", "serviceaccounts"), self.ns, {"metadata": {"name": OPERATOR_SA}})
        subject = {"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": self.ns}
        if self.scope == "cluster":
            reg.create(
                (RBAC, "v1", "clusterroles"),
                None,
                {"metadata": {"name": self.ns}, "rules": self.rules},
            )
            reg.create((RBAC, "v1", "clusterrolebindings"), None, {"metadata": {"name": self.ns},
                       "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": self.ns}, "subjects": [subject]})  # fmt: skip
        else:
            reg.create(
                (RBAC, "v1", "roles"),
                self.ns,
                {"metadata": {"name": OPERATOR_SA}, "rules": self.rules},
            )
            reg.create((RBAC, "v1", "rolebindings"), self.ns, {"metadata": {"name": OPERATOR_SA},
                       "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": OPERATOR_SA}, "subjects": [subject]})  # fmt: skip
        server = self.cluster.server
        token = create_token(
            reg, server.auth.tokens, self.ns, OPERATOR_SA, {"spec": {}}, time.time()
        )
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "c",
                    "cluster": {
                        "server": server.secure_url,
                        "certificate-authority": server.cert_file,
                    },
                }
            ],
            "users": [{"name": "u", "user": {"token": token["status"]["token"]}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "c",
        }
        path = self.tmp / f"{self.ns}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return str(path)

    def _start(self, kubeconfig: str) -> None:
        binary = os.path.join(os.path.dirname(sys.executable), "tf-operator")
        args = [binary, f"--kubeconfig={kubeconfig}", "--monitoring-port=0", "--monitoring-address=127.0.0.1",
                "--threadiness=2", "--json-log-format=false", *FAST_ELECTION, f"--leader-elect-resource-lock={self.lock}"]  # fmt: skip
        if self.scope == "namespace":
            args.append(f"--namespace={self.ns}")
        if self.gang:
            args += ["--enable-gang-scheduling=true", "--gang-scheduler-name=kube-batch"]
        env = {**os.environ, "KUBEFLOW_NAMESPACE": self.ns}
        env.pop("KUBECONFIG", None)
        self.log_path = self.tmp / f"{self.ns}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.reg.delete(("", "v1", "namespaces"), None, self.ns)
        wait_for(
            lambda: (
                self.ns
                not in {n["metadata"]["name"] for n in self.reg.list(("", "v1", "namespaces"))[0]}
            ),
            30,
        )

    # -- the scenario ------------------------------------------------------------------

    def _get(self, gvr, name):
        try:
            return self.reg.get(gvr, self.ns, name)
        except Exception:  # noqa: BLE001
            return None

    def _pods(self):
        return {
            p["metadata"]["name"]: p
            for p in self.reg.list(PODS, self.ns, label_selector=f"tf-job-name={JOB}")[0]
        }

    def _owned(self, gvr, name) -> bool:
        obj = self._get(gvr, name)
        return bool(
            obj and any(r.get("controller") for r in obj["metadata"].get("ownerReferences") or [])
        )

    def _orphan(self, gvr, name) -> None:
        self.reg.patch(gvr, self.ns, name, {"metadata": {"ownerReferences": None}}, "merge")

    def _recreated(self, gvr, name, old_uid):
        obj = self._get(gvr, name)
        return obj is not None and obj["metadata"]["uid"] != old_uid

    def _finish_pods(self) -> None:
        for name, pod in self._pods().items():
            worker = pod["metadata"]["labels"].get("tf-replica-type") == "worker"
            state = (
                {"terminated": {"exitCode": 0, "reason": "Completed"}}
                if worker
                else {"running": {}}
            )
            pod["status"] = {"phase": "Succeeded" if worker else "Running",
                             "containerStatuses": [{"name": "tensorflow", "ready": not worker, "restartCount": 0, "state": state}]}  # fmt: skip
            self.reg.update(PODS, self.ns, name, pod, subresource="status")

    def steps(self) -> list[tuple[str, Callable[[], None], Callable[[], object]]]:
        """(what, action, done) in order."""
        lock = ENDPOINTS if self.lock == "endpoints" else LEASES
        worker = {
            "replicas": 2,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}},
        }
        job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": JOB},
               "spec": {"ttlSecondsAfterFinished": 1, "tfReplicaSpecs": {"PS": {**worker, "replicas": 1}, "Worker": worker}}}  # fmt: skip
        uids: dict[str, str] = {}

        def renewed():
            first = self._get(lock, "tf-operator")
            return first is not None and first["metadata"]["resourceVersion"] != uids.setdefault(
                "lock", first["metadata"]["resourceVersion"]
            )

        def delete_service():
            uids["svc"] = self.reg.get(SERVICES, self.ns, f"{JOB}-ps-0")["metadata"]["uid"]
            self.reg.delete(SERVICES, self.ns, f"{JOB}-ps-0")

        steps = [
            ("leader elected", lambda: None, lambda: self._get(lock, "tf-operator")),
            ("lock renewed", lambda: None, renewed),
            ("job created", lambda: self.reg.create(TFJOBS, self.ns, job),
             lambda: len(self._pods()) == 3 and self._get(SERVICES, f"{JOB}-worker-1") and (self._get(TFJOBS, JOB) or {}).get("status")),
            ("pod adopted", lambda: self._orphan(PODS, f"{JOB}-worker-0"), lambda: self._owned(PODS, f"{JOB}-worker-0")),
            ("service adopted", lambda: self._orphan(SERVICES, f"{JOB}-worker-0"), lambda: self._owned(SERVICES, f"{JOB}-worker-0")),
            ("service recreated", delete_service, lambda: self._recreated(SERVICES, f"{JOB}-ps-0", uids["svc"])),
            ("service recreated again", delete_service, lambda: self._recreated(SERVICES, f"{JOB}-ps-0", uids["svc"])),
        ]  # fmt: skip
        if self.gang:
            steps += [
                ("PodGroup resized", lambda: self.reg.patch(TFJOBS, self.ns, JOB, {"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 3}}}}, "merge"),
                 lambda: (self._get(self.podgroups, JOB) or {}).get("spec", {}).get("minMember") == 4 and len(self._pods()) == 4),
            ]  # fmt: skip
        steps.append(
            ("job finished and deleted", self._finish_pods, lambda: self._get(TFJOBS, JOB) is None)
        )
        if self.gang:
            steps.append(
                ("PodGroup deleted", lambda: None, lambda: self._get(self.podgroups, JOB) is None)
            )
        return steps

    def run(
        self, stop_on: Triple | None = None, step_timeout: float = 20.0, election_only: bool = False
    ) -> RunResult:
        """Walk the scenario (only leader election with ``election_only``); with ``stop_on``,
        end as soon as that operation is denied."""
        self._start(self._setup())
        auth = self.cluster.server.auth

        def denied() -> bool:
            return (
                stop_on is not None and auth.decisions_of(self.user).get((*stop_on, False), 0) > 0
            )

        try:
            for what, action, done in self.steps()[: 2 if election_only else None]:
                if denied():
                    break
                action()
                wait_for(
                    lambda done=done: denied() or done(),
                    step_timeout,
                    what=f"{what} (operator log: {self.log_path})",
                )
            return RunResult(
                auth.decisions_of(self.user), denied(), self.log_path.read_text(errors="replace")
            )
        finally:
            self.stop()
