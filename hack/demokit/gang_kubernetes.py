"""``make demo ARGS="--gang kubernetes"``: two TFJobs compete for nodes that fit only one, gang
scheduled by Kubernetes' own Workload and PodGroup API, with nothing installed but the cluster.

The local cluster gets two nodes of 2 CPUs and its default scheduler, which honours a pod's
``spec.schedulingGroup`` all or nothing, as kube-scheduler 1.37 does with the
``GenericWorkload`` gate. ``tf-operator --enable-gang-scheduling --gang-scheduler-name
kubernetes`` makes each job's Workload and PodGroup (``minCount`` 2) before its pods. Both jobs
ask two workers of 2 CPUs: one job runs whole, the other waits with no pod bound, its PodGroup
saying why (``PodGroupInitiallyScheduled=False``, told on the job too), and runs whole once the
first has finished. The demo checks, at every look, that the two jobs never hold nodes at
once, and exits 0 only if both succeed and every group is gone.

With ``--real`` (``make demo ARGS="--gang kubernetes --real"``) the same story runs on the real
control plane: kube-apiserver with the Workload API and the real kube-scheduler decide.

Everything started here is stopped on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, cast

import yaml

from demokit.gang import BIN, NS, DemoFailed, child, wait_ready
from demokit.harness import CONTROL_PLANE_ENV, ROOT

NODES = "name=node,count=2,cpu=2,memory=8Gi"
JOBS = {"first": "4", "second": "2"}  # name -> seconds its workers run
GROUP = "scheduling.k8s.io"
VERSION = "v1beta1"
RUN_SECONDS = "localcluster.tf-operator.io/run-seconds"


def tfjob(name: str, seconds: str) -> dict[str, Any]:
    container = {
        "name": "tensorflow",
        "image": "tensorflow/tensorflow:1.15.5",
        "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
    }
    template = {
        "metadata": {"annotations": {RUN_SECONDS: seconds}},
        "spec": {"containers": [container]},
    }
    worker = {"replicas": 2, "restartPolicy": "Never", "template": template}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"tfReplicaSpecs": {"Worker": worker}},
    }


class Api:
    """The official Kubernetes client, reduced to what this demo reads and writes."""

    def __init__(self, kubeconfig: str) -> None:
        from kubernetes import client, config

        self.api = config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]  # the client leaves it unannotated
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.crds = client.ApiextensionsV1Api(self.api)

    def install_tfjob_crd(self) -> None:
        crd = yaml.safe_load((ROOT / "manifests/base/crd.yaml").read_text())
        self.crds.create_custom_resource_definition(crd, _preload_content=False)

    def wait_served(self, timeout: float = 60) -> None:
        """Until TFJobs are served and the namespace's default ServiceAccount exists (a real
        kube-apiserver establishes a CRD, and kube-controller-manager makes the account, a
        moment after)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.custom.list_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs")
                self.core.read_namespaced_service_account("default", NS)
                return
            except Exception as err:
                if time.monotonic() > deadline:
                    raise DemoFailed(f"the cluster did not serve TFJobs in time: {err}") from err
            time.sleep(0.2)  # polling interval while the API comes up

    def pods(self) -> list[Any]:
        return sorted(self.core.list_namespaced_pod(NS).items, key=lambda p: p.metadata.name)

    def podgroups(self) -> list[dict[str, Any]]:
        listed = cast(
            dict[str, Any],
            self.custom.list_namespaced_custom_object(GROUP, VERSION, NS, "podgroups"),
        )
        return cast(list[dict[str, Any]], listed["items"])

    def tfjob_state(self, name: str) -> str:
        job = cast(
            dict[str, Any],
            self.custom.get_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs", name),
        )
        current = [
            c["type"]
            for c in (job.get("status") or {}).get("conditions") or []
            if c.get("status") == "True"
        ]
        return current[-1] if current else ""

    def create_tfjob(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs", body)

    def job_told(self, name: str, reason: str) -> list[str]:
        events = self.core.list_namespaced_event(
            NS, field_selector=f"involvedObject.name={name},involvedObject.kind=TFJob"
        ).items
        return [e.message or "" for e in events if e.reason == reason]


def _owner(obj: dict[str, Any]) -> str:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("name"))
    return ""


def _scheduled(group: dict[str, Any]) -> tuple[str, str, str]:
    for cond in (group.get("status") or {}).get("conditions") or []:
        if cond["type"] == "PodGroupInitiallyScheduled":
            return cond["status"], cond.get("reason") or "", cond.get("message") or ""
    return "", "", ""


class Watcher:
    """Prints what changed since the last look and checks that no two jobs hold nodes."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.started = time.monotonic()
        self.groups: dict[str, tuple[str, str, str]] = {}  # job -> last condition seen
        self.gone: set[str] = set()
        self.placed: dict[str, str] = {}
        self.states: dict[str, str] = {}
        self.told: dict[str, int] = {}
        self.overlaps = 0

    def say(self, text: str) -> None:
        print(f"  {time.monotonic() - self.started:5.1f}s  {text}", flush=True)

    def look(self) -> None:
        seen: set[str] = set()
        for group in self.api.podgroups():
            job, name = _owner(group), group["metadata"]["name"]
            seen.add(job)
            if job not in self.groups:
                count = group["spec"]["schedulingPolicy"]["gang"]["minCount"]
                self.groups[job] = ("", "", "")
                self.say(f"PodGroup {name} of {job} created (gang, minCount {count})")
            condition = _scheduled(group)
            if condition != self.groups[job] and condition[0]:
                self.groups[job] = condition
                status, reason, message = condition
                self.say(
                    f"PodGroup of {job}: PodGroupInitiallyScheduled={status} {reason} {message}"
                )
        for job in list(self.groups):
            if job not in seen and job not in self.gone:
                self.gone.add(job)
                self.say(f"PodGroup of {job} deleted by the operator")
        holding: dict[str, int] = {}
        for pod in self.api.pods():
            job = (pod.metadata.labels or {}).get("tf-job-name", "")
            node = pod.spec.node_name
            if node and pod.metadata.name not in self.placed:
                self.placed[pod.metadata.name] = node
                self.say(f"pod {pod.metadata.name} -> {node}")
            if node and pod.status.phase not in ("Succeeded", "Failed"):
                holding[job] = holding.get(job, 0) + 1
        if len(holding) > 1:
            self.overlaps += 1
            self.say(f"BOTH jobs hold nodes: {holding}")
        for job in JOBS:
            state = self.api.tfjob_state(job)
            if state and state != self.states.get(job):
                self.states[job] = state
                self.say(f"TFJob {job} {state}")
            told = self.api.job_told(job, "PodGroupUnschedulable")
            if len(told) > self.told.get(job, 0):
                self.told[job] = len(told)
                self.say(f"TFJob {job} told: {told[-1]}")


def run_jobs(api: Api, timeout: float, workdir: Path, kubeconfig: str) -> int:
    flags = ["--enable-gang-scheduling=true", "--gang-scheduler-name=kubernetes"]
    argv = [str(BIN / "tf-operator"), f"--kubeconfig={kubeconfig}", "--monitoring-port=0"]
    argv += ["--monitoring-address=127.0.0.1", "--json-log-format=false", "--no-leader-elect"]
    with child(argv + flags, workdir / "operator.log") as operator:
        print(f"started tf-operator {' '.join(flags)}")
        for name, seconds in JOBS.items():
            api.create_tfjob(tfjob(name, seconds))
        print(
            "submitted TFJobs "
            + " and ".join(JOBS)
            + ": each Worker x2 (cpu 2), running "
            + " and ".join(f"{s}s" for s in JOBS.values())
        )
        watcher = Watcher(api)
        deadline = time.monotonic() + timeout
        while any(watcher.states.get(j) not in ("Succeeded", "Failed") for j in JOBS) or (
            watcher.gone != set(JOBS)
        ):
            if operator.poll() is not None:
                raise DemoFailed(f"tf-operator exited with {operator.returncode}")
            if time.monotonic() > deadline:
                raise DemoFailed(f"the jobs did not finish within {timeout:.0f}s")
            watcher.look()
            time.sleep(0.2)  # polling interval of the display
    print("\nwhere each pod ran:")
    for pod, node in sorted(watcher.placed.items()):
        print(f"  {pod:<16} {node}")
    print(f"looks where both jobs held nodes at once: {watcher.overlaps}")
    ok = watcher.overlaps == 0 and all(watcher.states.get(j) == "Succeeded" for j in JOBS)
    return 0 if ok else 1


def run(args: argparse.Namespace, workdir: Path) -> int:
    argv = [str(BIN / "tf-operator-localcluster"), "--kubelet=simulated", "--port=0"]
    argv += [f"--kubeconfig={workdir / 'kubeconfig'}", f"--node-pool={NODES}"]
    with child(argv, workdir / "cluster.log", pipe=True) as cluster:
        url, kubeconfig = wait_ready(cluster)
        plane = os.environ.get(CONTROL_PLANE_ENV, "emulated")
        scheduler = (
            "kube-scheduler v1.37" if plane == "real" else "the emulator's default scheduler"
        )
        print(
            f"local cluster ready at {url} (control plane: {plane}): simulated kubelet, two "
            f"nodes of 2 CPUs, {scheduler} (scheduling.k8s.io/v1beta1 Workload and PodGroup, "
            "all or nothing)"
        )
        api = Api(kubeconfig)
        api.install_tfjob_crd()
        api.wait_served()
        return run_jobs(api, args.timeout, workdir, kubeconfig)
