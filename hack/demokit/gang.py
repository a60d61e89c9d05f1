"""``make demo ARGS="--gang volcano"`` (or ``--gang kube-batch``, ``--gang coscheduling``): gang
scheduling of a TFJob whose CPU-only master and GPU workers need different nodes.

The local cluster gets a CPU pool and a GPU pool and plays the chosen batch scheduler (the
simulated kubelet runs each container for a moment, then it exits 0). ``tf-operator`` runs with
``--enable-gang-scheduling``. The GPU node starts cordoned, so the gang first waits (PodGroup
``Inqueue`` for Volcano, ``Pending`` for kube-batch, with the scheduler's reason) although the
master alone would fit on the CPU node: all or nothing. Once the scheduler has reported that,
the demo uncordons the GPU node and shows the PodGroup turn ``Running``, where each pod lands,
and the job succeed. The Volcano run uses Volcano 1.5-1.10's predicate error cache (mode
``task-spec``): it works because the operator puts ``volcano.sh/task-spec: <replica type>`` on
every pod.

``--gang coscheduling`` plays scheduler-plugins' coscheduling instead (``tf-operator
--gang-scheduler-name=scheduler-plugins``): the master is assumed on the CPU node and held at
Permit, the workers find no node, so the scheduler gives the master's room back and the gang
backs off; the PodGroup controller keeps the group ``Scheduling``, and the operator tells the job
why from its pods' reasons. Once the GPU node is uncordoned the three pods are bound together.

``--gang kubernetes`` is another story, told by :mod:`demokit.gang_kubernetes`: two jobs
compete for too few nodes under Kubernetes' own Workload and PodGroup API.

``--gang volcano --without-task-spec`` shows why that annotation matters: it submits the same
PodGroup and master/worker pods directly, without the annotation (as tf-operator v0.5.3 wrote
them), to the same scheduler; they stay Pending with Volcano's condition message, the demo
explains why, and exits 1 after ``--timeout`` seconds (default 10 here). No operator runs in
that mode: nothing is switched off in the operator to get there.

Everything started here is stopped on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import contextlib
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import yaml

from demokit.harness import ROOT, stop_process_group, wait_until
from localcluster.lifeline import bound_to_parent

BIN = Path(sys.executable).parent
NS = "default"
JOB = "tf-test"
RUN_SECONDS = "2"
POOLS = (
    "name=cpu,count=1,cpu=8,memory=16Gi,labels=resType=CPU",
    "name=gpu,count=1,cpu=8,memory=32Gi,gpus=2,labels=resType=GPU;nvidia-device-enable=enable",
)

PODGROUP_API = {
    "volcano": ("scheduling.volcano.sh", "v1beta1"),
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1"),
    "coscheduling": ("scheduling.x-k8s.io", "v1alpha1"),
}
# the operator's --gang-scheduler-name for each story
OPERATOR_GANG = {
    "volcano": "volcano",
    "kube-batch": "kube-batch",
    "coscheduling": "scheduler-plugins",
}
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
WHY = """\
Why: tf-operator v0.5.3 put no volcano.sh/task-spec on its pods, so Volcano 1.5-1.10 cached
every predicate failure of this job under one key, "default/tf-test/". The master was
tried first: gpu-0 rejected it (node selector resType=CPU), and that failure was cached.
Then the worker was rejected on gpu-0 with the master's cached error, without being checked,
and on cpu-0 because it has no GPU. The gang can never be whole, so nothing is bound, every
cycle, forever (volcano-sh/volcano#2937, fixed in Volcano 1.11). This port's operator
annotates every pod with volcano.sh/task-spec: <replica type>: run the demo without
--without-task-spec to see the same job scheduled."""


class DemoFailed(Exception):
    """A step of the demo failed; the message says which."""


@contextlib.contextmanager
def child(argv: list[str], log: Path, pipe: bool = False) -> Iterator[subprocess.Popen[bytes]]:
    """A child process in its own session, logging to ``log``; stopped on exit."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            bound_to_parent(argv),
            stdout=subprocess.PIPE if pipe else out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            stop_process_group(proc, grace=10)


def wait_ready(cluster: subprocess.Popen[bytes], timeout: float = 60) -> tuple[str, str]:
    assert cluster.stdout is not None
    ready, _, _ = select.select([cluster.stdout], [], [], timeout)
    line = cluster.stdout.readline().decode().strip() if ready else ""
    if not line.startswith("ready "):
        raise DemoFailed(f"the local cluster did not start ({line!r})")
    _, url, kubeconfig = line.split()
    return url, kubeconfig


class Api:
    """The official Kubernetes client, reduced to what the demo reads and writes."""

    def __init__(self, kubeconfig: str, scheduler: str) -> None:
        from kubernetes import client, config

        self.api = config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]  # the client leaves it unannotated
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.crds = client.ApiextensionsV1Api(self.api)
        self.group, self.version = PODGROUP_API[scheduler]

    def install_tfjob_crd(self) -> None:
        """Create the TFJob CRD and wait until TFJobs list (kube-apiserver serves a new CRD a
        moment after it stores it)."""
        crd = yaml.safe_load((ROOT / "manifests/base/crd.yaml").read_text())
        self.crds.create_custom_resource_definition(crd, _preload_content=False)
        wait_until(
            lambda: self.custom.list_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs"),
            30,
            "tfjobs to be served",
        )

    def nodes(self) -> list[Any]:
        return sorted(self.core.list_node().items, key=lambda n: n.metadata.name)

    def pods(self) -> list[Any]:
        return sorted(self.core.list_namespaced_pod(NS).items, key=lambda p: p.metadata.name)

    def podgroup(self) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            podgroup = self.custom.get_namespaced_custom_object(
                self.group, self.version, NS, "podgroups", JOB
            )
            return cast(dict[str, Any], podgroup)
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    def create_podgroup(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(self.group, self.version, NS, "podgroups", body)

    def create_pod(self, body: dict[str, Any]) -> None:
        self.core.create_namespaced_pod(NS, body)  # type: ignore[arg-type]  # a plain dict serialises as a V1Pod does

    def tfjob(self) -> dict[str, Any]:
        tfjob = self.custom.get_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs", JOB)
        return cast(dict[str, Any], tfjob)

    def create_tfjob(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object("kubeflow.org", "v1", NS, "tfjobs", body)

    def job_told(self, reason: str) -> list[str]:
        """Messages of the TFJob's events of this reason, oldest first."""
        events = self.core.list_namespaced_event(
            NS, field_selector=f"involvedObject.name={JOB},involvedObject.kind=TFJob"
        ).items
        ordered = sorted(events, key=lambda e: int(e.metadata.resource_version or 0))
        return [e.message or "" for e in ordered if e.reason == reason]

    def cordon(self, node: str, cordoned: bool) -> None:
        self.core.patch_node(node, {"spec": {"unschedulable": cordoned or None}})


# ------------------------------------------------------------------ what is submitted


def container(gpu: bool) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    if gpu:
        resources["limits"] = {"nvidia.com/gpu": "1"}
    return {"name": "tensorflow", "image": "tensorflow/tensorflow:1.15.5", "resources": resources}


def replica(count: int, gpu: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(gpu)]}
    if not gpu:
        spec["nodeSelector"] = {"resType": "CPU"}
    meta = {"annotations": {"localcluster.tf-operator.io/run-seconds": RUN_SECONDS}}
    return {
        "replicas": count,
        "restartPolicy": "Never",
        "template": {"metadata": meta, "spec": spec},
    }


def tfjob() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": JOB, "namespace": NS},
        "spec": {
            "tfReplicaSpecs": {"Master": replica(1, gpu=False), "Worker": replica(2, gpu=True)}
        },
    }


def v053_pod(name: str, gpu: bool) -> dict[str, Any]:
    """A gang pod as tf-operator v0.5.3 wrote it: group annotation, no task-spec."""
    spec = replica(1, gpu)["template"]["spec"]
    return {
        "metadata": {"name": name, "namespace": NS, "annotations": {GROUP_ANNOTATION: JOB}},
        "spec": {"schedulerName": "volcano", "restartPolicy": "Never", **spec},
    }


# ------------------------------------------------------------------ printing


def print_nodes(api: Api) -> None:
    print(f"  {'NAME':<7} {'CPU':>3} {'MEMORY':>6} {'GPU':>3}  LABELS")
    for node in api.nodes():
        capacity = node.status.capacity or {}
        labels = {
            k: v
            for k, v in (node.metadata.labels or {}).items()
            if not k.endswith(("os", "arch", "hostname"))
        }
        shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        gpus = capacity.get("nvidia.com/gpu", "0")
        print(
            f"  {node.metadata.name:<7} {capacity['cpu']:>3} {capacity['memory']:>6} {gpus:>3}  {shown}"
        )


def pod_condition(pod: Any) -> tuple[str, str]:
    for cond in pod.status.conditions or []:
        if cond.type == "PodScheduled" and cond.status == "False":
            return cond.reason or "", cond.message or ""
    return "", ""


class Watcher:
    """Prints what changed since the last look: PodGroup phase, placements, job state."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.started = time.monotonic()
        self.phases: list[str] = []
        self.placed: dict[str, str] = {}
        self.group_seen = False
        self.state = ""
        self.waiting_reason = ""  # why the gang waits, as the scheduler or the job tells it

    def say(self, text: str) -> None:
        print(f"  {time.monotonic() - self.started:5.1f}s  {text}", flush=True)

    def look(self, with_job: bool) -> None:
        group = self.api.podgroup()
        if group is not None and not self.group_seen:
            self.group_seen = True
            self.say(f"PodGroup {JOB} created, minMember {group['spec'].get('minMember')}")
        if group is None and self.group_seen and with_job and "deleted" not in self.phases:
            self.phases.append("deleted")
            self.say(f"PodGroup {JOB} deleted by the operator")
        status = (group or {}).get("status") or {}
        phase = status.get("phase")
        if phase and (not self.phases or self.phases[-1] != phase):
            self.phases.append(phase)
            self.say(f"PodGroup {JOB} phase {phase}")
        if phase in ("Pending", "Inqueue"):
            for cond in status.get("conditions") or []:
                if cond["type"] == "Unschedulable" and cond["status"] == "True":
                    self.waiting_reason = cond.get("message") or ""
        if phase == "Scheduling" and with_job:
            # scheduler-plugins writes no condition: the operator tells the pods' reason (D76)
            told = self.api.job_told("PodGroupUnschedulable")
            self.waiting_reason = told[-1].partition(" is unschedulable: ")[2] if told else ""
        for pod in self.api.pods():
            node = pod.spec.node_name
            if node and pod.metadata.name not in self.placed:
                self.placed[pod.metadata.name] = node
                labels = pod.metadata.labels or {}
                if POD_GROUP_LABEL in labels:
                    joined = f"pod-group {labels[POD_GROUP_LABEL]}"
                else:
                    spec = (pod.metadata.annotations or {}).get(TASK_SPEC_ANNOTATION, "-")
                    joined = f"task-spec {spec}"
                self.say(f"pod {pod.metadata.name} -> {node} ({joined})")
        if with_job:
            conditions = (self.api.tfjob().get("status") or {}).get("conditions") or []
            current = [c["type"] for c in conditions if c.get("status") == "True"]
            state = current[-1] if current else ""
            if state and state != self.state:
                self.state = state
                self.say(f"TFJob {JOB} {state}")


# ------------------------------------------------------------------ the two stories


def judged(story: str, pods: list[Any], waiting_reason: str) -> bool:
    """Whether the scheduler has judged the whole gang: every pod has its reason. For
    coscheduling, from one round over the whole gang (not from refusals made while its pods
    were still being created): the master held then let go, the workers short of a GPU, and
    the job told so."""
    if len(pods) != 3 or not all(pod_condition(p)[0] for p in pods):
        return False
    if story != "coscheduling":
        return True
    short = "Insufficient nvidia.com/gpu"
    for pod in pods:
        message = pod_condition(pod)[1]
        if "master" in pod.metadata.name:
            if not message.endswith("optimistic rejection in PostFilter."):
                return False
        elif short not in message:
            return False
    return short in waiting_reason


def run_job(api: Api, story: str, timeout: float, workdir: Path, kubeconfig: str) -> int:
    flags = ["--enable-gang-scheduling=true", f"--gang-scheduler-name={OPERATOR_GANG[story]}"]
    argv = [str(BIN / "tf-operator"), f"--kubeconfig={kubeconfig}", "--monitoring-port=0"]
    argv += ["--monitoring-address=127.0.0.1", "--json-log-format=false", "--no-leader-elect"]
    with child(argv + flags, workdir / "operator.log") as operator:
        print(f"started tf-operator {' '.join(flags)}")
        api.create_tfjob(tfjob())
        print(
            f"submitted TFJob {JOB}: Master x1 (cpu 1, nodeSelector resType=CPU), "
            "Worker x2 (cpu 1, nvidia.com/gpu 1), each running 2s"
        )
        watcher = Watcher(api)
        deadline = time.monotonic() + timeout
        cordoned = True
        while watcher.state not in ("Succeeded", "Failed") or "deleted" not in watcher.phases:
            if operator.poll() is not None:
                raise DemoFailed(f"tf-operator exited with {operator.returncode}")
            if time.monotonic() > deadline:
                raise DemoFailed(f"the job did not finish within {timeout:.0f}s")
            watcher.look(with_job=True)
            pods = api.pods()
            if cordoned and watcher.waiting_reason and judged(story, pods, watcher.waiting_reason):
                watcher.look(with_job=False)  # the gang's message of that same cycle
                watcher.say(f"the gang waits: {watcher.waiting_reason}")
                for pod in pods:
                    reason, message = pod_condition(pod)
                    watcher.say(f"  {pod.metadata.name}: {reason}: {message}")
                if story == "coscheduling":
                    watcher.say(
                        "  (the master fitted cpu-0 and was held there at Permit; the workers "
                        "fit nowhere, so it was let go: all or nothing, retried after a back-off)"
                    )
                watcher.say("uncordoning gpu-0")
                api.cordon("gpu-0", False)
                cordoned = False
            time.sleep(0.2)  # polling interval of the display
    print("\nwhere each pod ran:")
    nodes = {n.metadata.name: (n.metadata.labels or {}).get("resType", "") for n in api.nodes()}
    for pod, node in sorted(watcher.placed.items()):
        print(f"  {pod:<18} {node:<6} resType={nodes.get(node, '?')}")
    print(f"PodGroup phases: {' -> '.join(watcher.phases)}")
    return 0 if watcher.state == "Succeeded" else 1


def run_without_task_spec(api: Api, timeout: float) -> int:
    group, version = PODGROUP_API["volcano"]
    api.create_podgroup(
        {
            "apiVersion": f"{group}/{version}",
            "kind": "PodGroup",
            "metadata": {"name": JOB, "namespace": NS},
            "spec": {"minMember": 3},
        }
    )
    names = {f"{JOB}-master-0": False, f"{JOB}-worker-0": True, f"{JOB}-worker-1": True}
    for name, gpu in names.items():
        api.create_pod(v053_pod(name, gpu))
    print(
        f"submitted PodGroup {JOB} (minMember 3) and pods {', '.join(names)} as tf-operator "
        "v0.5.3 wrote them: schedulerName volcano, group annotation, no volcano.sh/task-spec"
    )
    watcher = Watcher(api)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        watcher.look(with_job=False)
        if watcher.placed:
            raise DemoFailed("a pod was bound: the scheduler did not reproduce the bug")
        time.sleep(0.2)  # polling interval of the display
    print(f"\nafter {timeout:.0f}s nothing is bound.")
    status = (api.podgroup() or {}).get("status") or {}
    print(f"PodGroup {JOB}: phase {status.get('phase')}")
    for cond in status.get("conditions") or []:
        print(f"  condition {cond['type']} ({cond.get('reason')}): {cond.get('message')}")
    print("pods:")
    for pod in api.pods():
        reason, message = pod_condition(pod)
        print(f"  {pod.metadata.name:<18} {pod.status.phase:<8} {reason}: {message}")
    print("\n" + WHY)
    return 1


# ------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gang", choices=sorted([*PODGROUP_API, "kubernetes"]), required=True)
    parser.add_argument(
        "--without-task-spec",
        action="store_true",
        help="Volcano only: submit v0.5.3-style pods without volcano.sh/task-spec",
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds to wait")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = parser.parse_args(argv)
    if args.without_task_spec and args.gang != "volcano":
        parser.error("--without-task-spec is the Volcano story; use it with --gang volcano")
    if args.timeout is None:
        args.timeout = 10.0 if args.without_task_spec else 60.0
    return args


def run(args: argparse.Namespace, workdir: Path) -> int:
    from localcluster.batchscheduler.flavours import VOLCANO_CONF

    # Volcano 1.5-1.10: predicate failures cached per "<job>/<volcano.sh/task-spec>"
    conf = workdir / "volcano-conf.yaml"
    cache = {"name": "allocate", "arguments": {"predicateErrorCache": "task-spec"}}
    conf.write_text(VOLCANO_CONF + yaml.safe_dump({"configurations": [cache]}))
    argv = [str(BIN / "tf-operator-localcluster"), "--kubelet=simulated", "--port=0"]
    argv += [f"--kubeconfig={workdir / 'kubeconfig'}"]
    argv += [f"--node-pool={pool}" for pool in POOLS]
    if args.gang == "coscheduling":
        argv.append("--scheduler-plugins")
        story = "scheduler-plugins' coscheduling (scheduler scheduler-plugins-scheduler)"
    else:
        argv.append(f"--batch-scheduler={args.gang}")
        story = "batch scheduler kube-batch"
    if args.gang == "volcano":
        argv.append(f"--batch-scheduler-conf=volcano={conf}")
        story = "batch scheduler Volcano 1.5-1.10 (predicate error cache per task-spec)"
    with child(argv, workdir / "cluster.log", pipe=True) as cluster:
        url, kubeconfig = wait_ready(cluster)
        print(f"local cluster ready at {url}: simulated kubelet, {story}")
        api = Api(kubeconfig, args.gang)
        print("nodes:")
        print_nodes(api)
        if args.without_task_spec:
            return run_without_task_spec(api, args.timeout)
        api.install_tfjob_crd()
        api.cordon("gpu-0", True)
        print("cordoned gpu-0: the workers cannot be placed yet")
        return run_job(api, args.gang, args.timeout, workdir, kubeconfig)


def main(
    argv: list[str] | None = None,
    runner: Callable[[argparse.Namespace, Path], int] | None = None,
) -> int:
    """Run the story the arguments ask for (``runner``: another story's ``run``, as
    ``--gang kubernetes`` gives :func:`demokit.gang_kubernetes.run`)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    begin = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="gang-demo-"))
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    code = 1
    try:
        code = (runner or run)(args, workdir)
    except DemoFailed as err:
        print(f"\ndemo failed: {err} (logs in {workdir})", file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        code = 130
    if code == 0 and not args.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    verdict = ("jobs" if args.gang == "kubernetes" else "job") + " Succeeded"
    verdict = verdict if code == 0 else f"exit code {code}"
    print(f"\n{verdict}; demo took {time.monotonic() - begin:.1f}s")
    return code


if __name__ == "__main__":
    sys.exit(main())
