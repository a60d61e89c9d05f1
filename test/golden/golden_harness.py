"""Runs an operator binary against a local cluster for the golden cases and reads back what it
wrote. Shared by ``record.py`` (the v0.5.3 reference binary) and ``test_golden.py`` (ours).

A case is a directory under ``v0.5.3/``: ``tfjob.yaml`` (the input), ``case.yaml`` (which
environment runs it, optional lifecycle ``steps``, named ``allowances`` and, while one is being
fixed, a ``known_defect`` of our operator that can make the case fail), and the recorded
fixtures ``pods.json``, ``services.json`` (+ ``podgroups.json`` with gang scheduling) and, for
cases with steps, ``final.json``.

An environment is one local cluster whose kubelet is ``none`` (no nodes, no scheduler: pods
stay unscheduled and Pending, and are deleted at once) plus one operator process with the
environment's flags. Both binaries get the same command line and environment: the kubeconfig
through ``KUBECONFIG`` (v0.5.3 has no ``--kubeconfig`` flag), ``KUBEFLOW_NAMESPACE`` for the
leader-election lock, ``--monitoring-port`` on a free port and text logs.

Lifecycle steps stand in for a kubelet: they write pod statuses (phase, container states,
exit codes, restart counts) through the status subresource and wait for a TFJob condition.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from golden_normalise import normalise_object, normalise_tfjob_status, sort_objects

from localcluster.cluster import LocalCluster
from support.crd import CRD_FILE, install_crds
from support.operator_process import terminate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = HERE / "v0.5.3"
PODGROUP_CRD_FILE = ROOT / "manifests/components/gang-kube-batch/podgroup-crd.yaml"

TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
PODGROUPS = ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups")
NAMESPACES = ("", "v1", "namespaces")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")

# Leader-lock traffic (renewals every few seconds) is not the operator reacting to a job.
TERMINAL_CONDITIONS = frozenset({"Succeeded", "Failed"})
LOCK_RESOURCES = frozenset({"endpoints", "leases", "configmaps"})
POLL_S = 0.05


@dataclass(frozen=True)
class Environment:
    """One cluster + operator configuration; cases name the one they run in."""

    name: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    namespaces: tuple[str, ...] = ()
    crds: tuple[Path, ...] = (CRD_FILE,)
    gang: bool = False


ENVIRONMENTS = {
    # Cluster-wide operator, no gang scheduling: most cases, in "default" and "team-a".
    "plain": Environment(
        "plain", env={"KUBEFLOW_NAMESPACE": "default"}, namespaces=("default", "team-a")
    ),
    # Gang scheduling with kube-batch, the operator scoped to one namespace, and a custom
    # cluster domain in TF_CONFIG (CUSTOM_CLUSTER_DOMAIN is read by both operators).
    "gang": Environment(
        "gang",
        args=("--enable-gang-scheduling", "--namespace=golden-gang"),
        env={"KUBEFLOW_NAMESPACE": "golden-gang", "CUSTOM_CLUSTER_DOMAIN": "cluster.local"},
        namespaces=("golden-gang",),
        crds=(CRD_FILE, PODGROUP_CRD_FILE),
        gang=True,
    ),
}


# ---------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Step:
    """Write these pod states, then wait for ``until``.

    ``pods`` maps ``all`` or a replica (``worker-0``) to a phase, or to a dict with ``phase``,
    ``exitCode`` (default 0, or 1 for Failed) and ``restartCount`` (default 0). ``until`` is a
    TFJob condition type that must become True, or ``recreated <replica>``: that replica's pod
    exists again under a new uid. States are written in the order given: a state that ends
    the job (worker 0 or the chief succeeding) goes last, or the operator's clean-up could
    delete a pod before its own state is written.
    """

    pods: dict[str, Any]
    until: str


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    environment: str
    description: str
    tfjob: dict
    steps: tuple[Step, ...]
    allowances: tuple[str, ...]
    known_defect: str | None = None

    @property
    def namespace(self) -> str:
        return self.tfjob["metadata"].get("namespace", "default")

    @property
    def job_name(self) -> str:
        return self.tfjob["metadata"]["name"]

    @property
    def total_replicas(self) -> int:
        specs = self.tfjob["spec"]["tfReplicaSpecs"].values()
        return sum(int(spec.get("replicas", 1)) for spec in specs)

    def fixture(self, name: str) -> Any:
        return json.loads((self.path / name).read_text())

    def fixture_names(self) -> list[str]:
        names = ["pods.json", "services.json"]
        if ENVIRONMENTS[self.environment].gang:
            names.append("podgroups.json")
        if self.steps:
            names.append("final.json")
        return names


def load_cases(root: Path = FIXTURES) -> list[Case]:
    cases = []
    for path in sorted(p for p in root.iterdir() if (p / "case.yaml").exists()):
        meta = yaml.safe_load((path / "case.yaml").read_text())
        steps = tuple(Step(s["pods"], s["until"]) for s in meta.get("steps") or [])
        cases.append(
            Case(
                name=path.name,
                path=path,
                environment=meta["environment"],
                description=meta["description"].strip(),
                tfjob=yaml.safe_load((path / "tfjob.yaml").read_text()),
                steps=steps,
                allowances=tuple(meta.get("allowances") or ()),
                known_defect=meta.get("known_defect"),
            )
        )
    return cases


# ---------------------------------------------------------------------------- waiting


class WaitTimeout(AssertionError):
    pass


def wait_for(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    """The first truthy ``fn()``; ``WaitTimeout`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(POLL_S)


# ---------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OperatorProcess:
    """An operator binary run as a user would run it, its log in ``log_path``."""

    def __init__(
        self, binary: str, kubeconfig: str, environment: Environment, log_path: Path
    ) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBEFLOW_NAMESPACE")}
        env.update(environment.env, KUBECONFIG=kubeconfig)
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        argv = [
            binary,
            f"--monitoring-port={free_port()}",
            "--json-log-format=false",
            *environment.args,
        ]
        self.proc = subprocess.Popen(
            argv, env=env, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self, grace: float) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds (v0.5.3 keeps running after its
        first SIGTERM: its leader-election loop does not return)."""
        terminate(self.proc, grace)
        self._log.close()


# ---------------------------------------------------------------------------- pod states


def _rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def pod_status(pod: dict, state: Any) -> dict:
    """The status a kubelet would report for ``state`` (see :class:`Step`)."""
    if isinstance(state, str):
        state = {"phase": state}
    phase = state["phase"]
    exit_code = state.get("exitCode", 1 if phase == "Failed" else 0)
    now = _rfc3339(time.time())
    statuses = []
    for container in pod["spec"]["containers"]:
        if phase == "Running":
            cstate: dict = {"running": {"startedAt": now}}
        else:
            reason = "Completed" if exit_code == 0 else "Error"
            cstate = {
                "terminated": {
                    "exitCode": exit_code,
                    "reason": reason,
                    "startedAt": now,
                    "finishedAt": now,
                }
            }
        statuses.append(
            {
                "name": container["name"],
                "image": container.get("image", ""),
                "imageID": "",
                "ready": phase == "Running",
                "started": phase == "Running",
                "restartCount": state.get("restartCount", 0),
                "state": cstate,
            }
        )
    return {"phase": phase, "startTime": now, "containerStatuses": statuses}


# ---------------------------------------------------------------------------- the session


class Session:
    """One environment: its cluster, its cases submitted, and an operator running on them."""

    def __init__(
        self,
        environment: Environment,
        cases: list[Case],
        workdir: Path,
        control_plane: str = "emulated",
    ) -> None:
        self.environment = environment
        self.control_plane = control_plane  # LocalCluster's: "emulated" or "real"
        self.cases = cases
        self.workdir = workdir
        self.cluster: LocalCluster | None = None
        self.operator: OperatorProcess | None = None
        self.job_uids: dict[str, str] = {}

    @property
    def registry(self) -> Any:
        """The cluster's client (the same calls on either control plane)."""
        assert self.cluster is not None
        return self.cluster.client

    @contextlib.contextmanager
    def running(self, binary: str, stop_grace: float) -> Iterator[Session]:
        """Start the cluster, submit every case's TFJob, start ``binary``; stop all after."""
        with LocalCluster(
            control_plane=self.control_plane,
            kubelet="none",
            state_dir=str(self.workdir / f"cluster-{self.environment.name}"),
        ) as cluster:
            self.cluster = cluster
            self._install()
            for case in self.cases:
                created = self.registry.create(TFJOBS, case.namespace, case.tfjob)
                self.job_uids[case.name] = created["metadata"]["uid"]
            log = self.workdir / f"operator-{self.environment.name}.log"
            self.operator = OperatorProcess(binary, cluster.kubeconfig, self.environment, log)
            try:
                yield self
            finally:
                self.operator.stop(stop_grace)

    def _install(self) -> None:
        install_crds(self.registry, *self.environment.crds)
        existing = {n["metadata"]["name"] for n in self.registry.list(NAMESPACES, None)[0]}
        for ns in self.environment.namespaces:
            if ns not in existing:
                self.registry.create(NAMESPACES, None, {"metadata": {"name": ns}})
        self._create_service_accounts()
        for ns in self.environment.namespaces:
            # ServiceAccount admission refuses pods until the namespace's default account
            # exists (kube-controller-manager makes it a moment after the namespace)
            wait_for(
                lambda ns=ns: any(
                    a["metadata"]["name"] == "default"
                    for a in self.registry.list(SERVICE_ACCOUNTS, ns).items
                ),
                30,
                f"the default ServiceAccount of {ns}",
            )
        wait_for(self._served, 30, "the TFJob (and PodGroup) CRDs to be served")

    def _create_service_accounts(self) -> None:
        """The accounts the cases' templates name: ServiceAccount admission (as on any real
        cluster) refuses pods whose account does not exist."""
        for case in self.cases:
            for spec in (case.tfjob.get("spec") or {}).get("tfReplicaSpecs", {}).values():
                name = ((spec.get("template") or {}).get("spec") or {}).get("serviceAccountName")
                if not name:
                    continue
                try:
                    self.registry.create(
                        SERVICE_ACCOUNTS, case.namespace, {"metadata": {"name": name}}
                    )
                except Exception as err:  # noqa: BLE001 - named by several replicas or cases
                    if getattr(err, "code", None) != 409:
                        raise

    def _served(self) -> bool:
        """Whether the CRDs' resources list: kube-apiserver answers 429 (storage initialising)
        for a moment after discovery already names a new resource."""
        try:
            self.registry.list(TFJOBS, "default")
            if self.environment.gang:
                self.registry.list(PODGROUPS, "default")
        except Exception:  # noqa: BLE001 - not served yet
            return False
        return True

    # -- reading back ------------------------------------------------------------------

    def _owned(self, gvr: tuple[str, str, str], case: Case) -> list[dict]:
        items = self.registry.list(gvr, case.namespace).items
        uid = self.job_uids[case.name]
        owned = [
            o
            for o in items
            if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or [])
        ]
        return sort_objects([normalise_object(o, uid) for o in owned])

    def objects(self, case: Case) -> dict[str, list[dict]]:
        """The normalised pods, services (and PodGroups) owned by the case's TFJob."""
        found = {"pods": self._owned(PODS, case), "services": self._owned(SERVICES, case)}
        if self.environment.gang:
            found["podgroups"] = self._owned(PODGROUPS, case)
        return found

    def tfjob_status(self, case: Case) -> dict:
        job = self.registry.get(TFJOBS, case.namespace, case.job_name)
        return normalise_tfjob_status(job.get("status"))

    def final(self, case: Case) -> dict:
        return {**self.objects(case), "tfjob_status": self.tfjob_status(case)}

    def has_condition(self, case: Case, ctype: str) -> bool:
        job = self.registry.get(TFJOBS, case.namespace, case.job_name)
        conditions = (job.get("status") or {}).get("conditions") or []
        return any(c.get("type") == ctype and c.get("status") == "True" for c in conditions)

    def operator_requests(self) -> int:
        """Requests the operator made so far, leader-lock traffic aside (every HTTP request
        here is the operator's: the harness uses the registry in process; the emulated control
        plane only)."""
        counts = self.cluster.server.request_metrics.snapshot()  # type: ignore[union-attr]
        return sum(n for (_, _, res, _), n in counts.items() if res not in LOCK_RESOURCES)

    # -- lifecycle steps -----------------------------------------------------------------

    def apply_step(self, case: Case, step: Step, timeout: float) -> None:
        pods = self.registry.list(
            PODS, case.namespace, label_selector=f"tf-job-name={case.job_name}"
        ).items
        by_replica = {p["metadata"]["name"].removeprefix(case.job_name + "-"): p for p in pods}
        for replica, state in step.pods.items():
            targets = list(by_replica.values()) if replica == "all" else [by_replica[replica]]
            for pod in targets:
                self._write_status(case.namespace, pod["metadata"]["name"], state)
        if step.until.startswith("recreated "):
            replica = step.until.removeprefix("recreated ")
            old_uid = by_replica[replica]["metadata"]["uid"]
            done = lambda: self._uid(case, replica) not in (None, old_uid)  # noqa: E731
            what = f"pod {replica} to be recreated"
        else:
            done = lambda: self.has_condition(case, step.until)  # noqa: E731
            what = f"TFJob condition {step.until}"
        wait_for(done, timeout, f"{case.name}: {what} after writing pod states {step.pods}")
        if step.until not in TERMINAL_CONDITIONS and not step.until.startswith("recreated "):
            # The condition can come from a pass that read only some of the states (Running
            # needs one running worker); the next step must not race the rest, or the pass
            # that ends the job counts replicas as they were before this step.
            wait_for(
                lambda: self._counts_running_pods(case),
                timeout,
                f"{case.name}: the replica statuses to count the pods Running after {step.pods}",
            )

    def _counts_running_pods(self, case: Case) -> bool:
        """Whether the job's ``replicaStatuses`` count as active every pod now Running."""
        pods = self.registry.list(
            PODS, case.namespace, label_selector=f"tf-job-name={case.job_name}"
        ).items
        running = Counter(
            p["metadata"]["labels"]["tf-replica-type"]
            for p in pods
            if (p.get("status") or {}).get("phase") == "Running"
        )
        job = self.registry.get(TFJOBS, case.namespace, case.job_name)
        statuses = (job.get("status") or {}).get("replicaStatuses") or {}
        return all(
            (statuses.get(rtype) or {}).get("active", 0) == running[rtype.lower()]
            for rtype in case.tfjob["spec"]["tfReplicaSpecs"]
        )

    def _uid(self, case: Case, replica: str) -> str | None:
        name = f"{case.job_name}-{replica}"
        items = self.registry.list(
            PODS, case.namespace, field_selector=f"metadata.name={name}"
        ).items
        return items[0]["metadata"]["uid"] if items else None

    def _write_status(self, namespace: str, name: str, state: Any) -> None:
        for _ in range(20):
            pod = self.registry.get(PODS, namespace, name)
            pod["status"] = pod_status(pod, state)
            try:
                self.registry.update(PODS, namespace, name, pod, subresource="status")
                return
            except Exception as err:  # noqa: BLE001 - retry conflicts only
                if getattr(err, "code", None) != 409:
                    raise
        raise RuntimeError(f"pod {namespace}/{name}: status write kept conflicting")
