"""PyTorchJobs on the local cluster, run by the real operator beside TFJobs (one process, both
controllers): a job whose replicas find each other only through the environment the operator
sets runs to Succeeded; training-operator v1.9's smoke-dist example (its program in plain
Python) runs to Succeeded; a job gang-scheduled by the local cluster's Volcano runs to
Succeeded, its PodGroup naming a task per replica type."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.testing import BACKENDS
from support.crd import PYTORCH_CRD_FILE, install_crds
from support.examples import run_here

from .conftest import PODS, wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_DIR = ROOT / "examples/pytorch/smoke-dist"
PYTORCHJOBS = ("kubeflow.org", "v1", "pytorchjobs")
PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")
BOTH = ("--enable-scheme=tfjob", "--enable-scheme=pytorchjob")

# Rank 0 listens on MASTER_PORT at its own address, every other rank connects to
# MASTER_ADDR:MASTER_PORT and says who it is; rank 0 exits once WORLD_SIZE - 1 ranks did.
RENDEZVOUS = """
import os, socket, time
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
print("rank", rank, "of", world, "master", addr, port, flush=True)
if rank == 0:
    with socket.create_server((socket.gethostbyname(addr), port)) as server:
        server.settimeout(60)
        seen = sorted(int(server.accept()[0].recv(16)) for _ in range(world - 1))
    print("ranks", seen, flush=True)
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection((addr, port), timeout=5) as conn:
                conn.sendall(str(rank).encode())
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
"""


def pytorchjob(name: str, workers: int, command: list[str], **spec: Any) -> dict:
    def replica(count: int) -> dict:
        container = {"name": "pytorch", "image": "localcluster/none", "command": command}
        return {"replicas": count, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(workers)}, **spec},
    }


def condition(client: Any, name: str, ctype: str) -> dict | None:
    job = client.get(PYTORCHJOBS, "default", name)
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


@pytest.fixture(scope="module")
def both(proc):
    try:
        install_crds(proc.client, PYTORCH_CRD_FILE)
    except Exception as err:  # noqa: BLE001 - the module's cluster may have it already
        assert "exists" in str(err).lower()
    return proc


@pytest.fixture(scope="module")
def op(both, module_operator):
    operator = module_operator(both, *BOTH, "--no-leader-elect")
    operator.wait_log("Starting PyTorchJob controller", 30)
    return operator


def test_replicas_rendezvous_through_the_environment_and_the_job_succeeds(both, op):
    client = both.client
    client.create(PYTORCHJOBS, "default", pytorchjob("rdzv", 2, [sys.executable, "-c", RENDEZVOUS]))
    wait_for(lambda: condition(client, "rdzv", "Succeeded"), 90, "PyTorchJob Succeeded")
    log = both.log("rdzv-master-0", container="pytorch")
    assert "rank 0 of 3 master rdzv-master-0 23456" in log
    assert "ranks [1, 2]" in log
    status = client.get(PYTORCHJOBS, "default", "rdzv")["status"]
    assert status["replicaStatuses"]["Master"]["succeeded"] == 1
    # events are sent after the status write that they announce, by the recorder's own thread
    wanted = {"SuccessfulCreatePod", "SuccessfulCreateService", "PyTorchJobSucceeded"}
    wait_for(lambda: wanted <= {e["reason"] for e in both.events("rdzv")}, 30, str(wanted))
    # the same process runs TFJobs
    both.create(both.job("beside", {"Worker": {"command": both.python("print('ok')")}}))
    both.wait_condition("beside", "Succeeded", 60)
    # v1.9's framework counters count both kinds; v0.5.3's count TFJobs only (each counted
    # after the status write the wait saw)
    counted = 'training_operator_jobs_successful_total{framework="tensorflow"} 1.0'

    def metrics_counting_it() -> str | None:
        text = op.http("/metrics")[1]
        return text if counted in text else None

    text = wait_for(metrics_counting_it, 30, counted)
    assert 'training_operator_jobs_successful_total{framework="pytorch"} 1.0' in text
    assert 'training_operator_jobs_successful_total{framework="tensorflow"} 1.0' in text
    assert op.metric("tf_operator_jobs_successful") == 1
    # every JSON log line about either job names its kind (D83)
    kinds: dict[str, set[str]] = {}
    for line in op.json_logs():
        if line.get("job") in ("default.rdzv", "default.beside"):
            kinds.setdefault(line["job"], set()).add(line.get("kind", "<none>"))
    assert kinds == {"default.rdzv": {"PyTorchJob"}, "default.beside": {"TFJob"}}


def test_the_v1_9_smoke_dist_example_succeeds(both, op):
    job = yaml.safe_load((EXAMPLE_DIR / "pytorchjob.yaml").read_text())
    run_here(job, "pytorchReplicaSpecs", EXAMPLE_DIR)
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "pytorchjob-port", "containerPort": 23457}  # beside the other test's master
    ]
    name = job["metadata"]["name"]
    both.client.create(PYTORCHJOBS, "default", job)
    wait_for(lambda: condition(both.client, name, "Succeeded"), 90, "example Succeeded")
    log = both.log(f"{name}-master-0", container="pytorch")
    assert sorted(line.split(" : ")[0] for line in log.splitlines() if "Result from" in line) == [
        f"Result from worker {rank}" for rank in (1, 2, 3)
    ]


VOLCANO = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
        {"plugins": [{"name": n} for n in ("drf", "predicates", "proportion", "nodeorder")]},
    ],
}


@pytest.fixture(scope="module", params=BACKENDS)
def volcano_cluster(request):
    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        batch_schedulers=("volcano",),
        batch_scheduler_conf={"volcano": VOLCANO},
        batch_schedule_period=0.2,
    ) as cluster:
        install_crds(cluster.client, ROOT / "manifests/base/crd.yaml", PYTORCH_CRD_FILE)
        yield cluster


def test_a_gang_scheduled_job_runs_on_volcano(volcano_cluster, operators):
    client = volcano_cluster.client
    operators(
        volcano_cluster,
        *BOTH,
        "--no-leader-elect",
        "--enable-gang-scheduling=true",
        "--gang-scheduler-name=volcano",
    )
    job = pytorchjob("gang", 3, ["true"])
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["metadata"] = {
            "annotations": {"localcluster.tf-operator.io/run-seconds": "0.5"}
        }
    client.create(PYTORCHJOBS, "default", job)
    group = wait_for(lambda: client.get(PODGROUPS, "default", "gang"), 30, "PodGroup")
    assert group["spec"]["minMember"] == 4
    assert group["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"

    def bound() -> list[dict] | None:
        items = client.list(PODS, "default", label_selector="pytorch-job-name=gang").items
        return items if len(items) == 4 and all(p["spec"].get("nodeName") for p in items) else None

    for pod in wait_for(bound, 30, "4 pods bound by Volcano"):
        assert pod["spec"]["schedulerName"] == "volcano"
        annotations = pod["metadata"]["annotations"]
        assert annotations["scheduling.k8s.io/group-name"] == "gang"
        assert (
            annotations["volcano.sh/task-spec"] == pod["metadata"]["labels"]["pytorch-replica-type"]
        )
    wait_for(lambda: condition(client, "gang", "Succeeded"), 30, "PyTorchJob Succeeded")

    def group_gone() -> bool:
        items = client.list(PODGROUPS, "default").items
        return "gang" not in {i["metadata"]["name"] for i in items}

    wait_for(group_gone, 30, "PodGroup deleted with the job's clean-up")


def test_the_sdk_drives_pytorchjobs(both, op):
    """PyTorchJobClient: the SDK's one client class for the PyTorchJob kind."""
    from tf_operator.sdk import Invalid, PyTorchJobClient, job_state

    client = PyTorchJobClient(both.kubeconfig, "default")
    say = "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])"
    job = pytorchjob("sdk", 2, [sys.executable, "-c", say])
    job["spec"]["runPolicy"] = {"cleanPodPolicy": "None"}
    assert client.create(job)["kind"] == "PyTorchJob"
    states: list[str] = []
    final = client.wait_for_job("sdk", timeout=90, callback=lambda j: states.append(job_state(j)))
    assert job_state(final) == "Succeeded" and states[-1] == "Succeeded"
    assert client.get_pod_names("sdk", replica_type="worker") == ["sdk-worker-0", "sdk-worker-1"]
    logs = sorted(line for _, line in client.get_logs("sdk", replica_type="worker"))
    assert logs == ["rank 1 of 3", "rank 2 of 3"]
    wait_for(
        lambda: "PyTorchJobSucceeded" in {e["reason"] for e in client.get_events("sdk")},
        30,
        "the PyTorchJobSucceeded event (sent after the status write)",
    )
    bad = pytorchjob("sdk-bad", 1, ["true"])
    bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2
    with pytest.raises(Invalid, match=r"Master\].replicas: Forbidden: must be 1"):
        client.create(bad)
    with pytest.raises(ValueError, match="expected kind PyTorchJob"):
        client.create({**job, "kind": "TFJob"})


def test_the_pytorchjob_command(both, op, tmp_path):
    """``pytorchjob``: the tfjob command's program told the PyTorchJob kind."""
    from click.testing import CliRunner

    from tf_operator.cli.main import cli
    from tf_operator.sdk import PYTORCHJOB

    def run(*args: str) -> str:
        result = CliRunner().invoke(
            cli, ["--kubeconfig", both.kubeconfig, "-n", "default", *args], obj=PYTORCHJOB
        )
        assert result.exit_code == 0, result.output
        return result.output

    say = "import os; print('rank', os.environ['RANK'])"
    job = pytorchjob("cli", 1, [sys.executable, "-c", say])
    job["spec"]["runPolicy"] = {"cleanPodPolicy": "None"}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    out = run("submit", str(path), "--wait", "--timeout", "90")
    assert "pytorchjob.kubeflow.org/cli created" in out
    assert "pytorchjob.kubeflow.org/cli succeeded" in out
    assert "pytorchjob.kubeflow.org/cli" in run("list", "-o", "name").split()
    described = run("describe", "cli")
    assert "State:" in described and "Succeeded" in described
    assert "master   0       cli-master-0" in described
    assert "worker   0       cli-worker-0" in described
    assert run("logs", "cli", "--replica", "worker").strip().endswith("rank 1")
