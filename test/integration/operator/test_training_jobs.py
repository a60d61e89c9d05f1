"""Jobs whose replicas are real processes (process kubelet): TF_CONFIG, success, restarts."""

import json
from pathlib import Path

import pytest
import yaml

from support.examples import run_here

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_DIR = ROOT / "examples/v1/local-dist-training"

PRINT_TF_CONFIG = "import os; print('TF_CONFIG=' + os.environ['TF_CONFIG'])"
# A PS that serves until it is deleted (cleanPodPolicy Running removes it).
PS_FOREVER = PRINT_TF_CONFIG + "; import time\nwhile True: time.sleep(1)"


@pytest.fixture(scope="module")
def op(proc, module_operator):
    operator = module_operator(proc, "--threadiness=2")
    proc.wait_for(operator.is_leader, 30, "leadership")
    return operator


def test_ps_and_workers_get_tf_config_and_succeed(proc, op):
    job = proc.job(
        "tfconfig",
        {
            "PS": {"command": proc.python(PS_FOREVER)},
            "Worker": {"replicas": 2, "command": proc.python(PRINT_TF_CONFIG)},
        },
    )
    proc.create(job)
    proc.wait_condition("tfconfig", "Succeeded", 60)
    line = proc.log("tfconfig-worker-0").strip().splitlines()[0]
    config = json.loads(line.removeprefix("TF_CONFIG="))
    assert config["task"] == {"type": "worker", "index": 0}
    assert config["environment"] == "cloud"
    assert config["cluster"] == {
        "ps": ["tfconfig-ps-0.default.svc:2222"],
        "worker": ["tfconfig-worker-0.default.svc:2222", "tfconfig-worker-1.default.svc:2222"],
    }
    # cleanPodPolicy defaults to Running: the still-running PS is deleted.
    proc.wait_for(
        lambda: not any("ps" in p["metadata"]["name"] for p in proc.pods("tfconfig")),
        30,
        "PS deleted",
    )
    # Worker 0 decides success (no chief). The pass that saw it also counted worker 1: active
    # if it was running, succeeded if it had exited, nothing if it was still pending. The
    # terminal pass then folds the active count into succeeded (as v0.5.3 does), so once it
    # has run nothing is active and worker 1 counts as succeeded unless it was still pending.
    worker = proc.wait_for(
        lambda: (
            (w := proc.get("tfconfig")["status"]["replicaStatuses"]["Worker"])
            and not w.get("active")
            and w
        ),
        30,
        "the terminal pass",
    )
    assert worker["succeeded"] in (1, 2) and not worker.get("failed")
    status = proc.get("tfconfig")["status"]
    assert status["completionTime"] and status["startTime"]
    assert {s["metadata"]["name"] for s in proc.services("tfconfig")} >= {"tfconfig-worker-0"}


def test_exit_code_restart_then_success(proc, op, tmp_path):
    marker = tmp_path / "crashed"
    code = (
        "import os, sys\n"
        f"m = {str(marker)!r}\n"
        "if os.environ['TF_CONFIG'].find('\"index\":1') > 0 and not os.path.exists(m):\n"
        "    open(m, 'w').close(); sys.exit(130)\n"
    )
    job = proc.job(
        "exitcode",
        {"Worker": {"replicas": 2, "restartPolicy": "ExitCode", "command": proc.python(code)}},
    )
    job["spec"]["tfReplicaSpecs"]["Chief"] = proc.job(
        "x", {"Chief": {"command": proc.python("import time; time.sleep(3)")}}
    )["spec"]["tfReplicaSpecs"]["Chief"]
    proc.create(job)
    proc.wait_condition("exitcode", "Succeeded", 60)
    assert marker.exists()

    def created() -> int:  # chief, 2 workers, worker 1 again (repeats are aggregated)
        events = proc.events("exitcode")
        return sum(e.get("count", 1) for e in events if e["reason"] == "SuccessfulCreatePod")

    # Events are written asynchronously by the operator's broadcaster.
    proc.wait_for(lambda: created() >= 4, 30, "four SuccessfulCreatePod events")
    assert created() == 4
    exited = [e["message"] for e in proc.events("exitcode") if e["reason"] == "ExitedWithCode"]
    assert any("exitcode-worker-1 exited with code 130" in m for m in exited), exited


def test_permanent_failure_fails_the_job(proc, op):
    job = proc.job(
        "permfail",
        {
            "Worker": {
                "replicas": 1,
                "restartPolicy": "ExitCode",
                "command": proc.python("raise SystemExit(1)"),
            }
        },
    )
    proc.create(job)
    cond = proc.wait_condition("permfail", "Failed", 60)
    assert cond["reason"] == "TFJobFailed"
    assert "1 Worker replica(s) failed" in cond["message"]


def test_local_dist_training_example_succeeds(proc, op):
    job = run_here(
        yaml.safe_load((EXAMPLE_DIR / "tfjob.yaml").read_text()), "tfReplicaSpecs", EXAMPLE_DIR
    )
    for spec in job["spec"]["tfReplicaSpecs"].values():
        for c in spec["template"]["spec"]["containers"]:
            c["args"] = [a.replace("--steps=300", "--steps=60") for a in c.get("args", [])]
    proc.create(job)
    proc.wait_condition("local-dist-training", "Succeeded", 90)
    log = proc.log("local-dist-training-chief-0")
    losses = [float(line.rsplit(" ", 1)[1]) for line in log.splitlines() if " loss " in line]
    assert len(losses) >= 2 and losses[-1] < losses[0]
