"""The ``tfjob`` command and the ``kubectl tfjob`` plugin against the local cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from test.integration.tools.conftest import python_job, unique
from tf_operator.cli.main import cli

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent


def tfjob(cluster, *args: str, input: str | None = None):
    result = CliRunner().invoke(cli, ["--kubeconfig", cluster.kubeconfig, *args], input=input)
    return result


def test_submit_wait_list_describe_logs_delete(cluster, operator, tmp_path):
    name = unique("cli")
    path = tmp_path / "job.yaml"
    code = "print('step 1'); print('step 2')"
    path.write_text(yaml.safe_dump(python_job(name, code, workers=2, clean_pod_policy="None")))

    result = tfjob(cluster, "submit", str(path), "--wait", "--timeout", "60")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"tfjob.kubeflow.org/{name} created"
    assert lines[-1] == f"tfjob.kubeflow.org/{name} succeeded"
    # not a terminal: plain progress lines, one per change, the last one the final state
    assert lines[1].startswith("[0s] ") and "| Worker: active " in lines[1]
    assert lines[-2].split()[1] == "Succeeded" and "\033" not in result.output

    listed = tfjob(cluster, "list", "-o", "wide").output.splitlines()
    row = next(line.split() for line in listed if line.startswith(name + " "))
    # SUCCEEDED counts worker 0 (which decided success), and worker 1 if it was done by then
    assert row[1] == "Succeeded" and row[3] == "Worker=2" and row[5] in ("1", "2")
    as_json = json.loads(tfjob(cluster, "list", "-o", "json").output)
    assert name in [j["metadata"]["name"] for j in as_json["items"]]

    described = tfjob(cluster, "describe", name).output
    assert f"{name}-worker-1" in described and "Succeeded" in described
    assert "SuccessfulCreatePod" in described

    expected = [f"[{name}-worker-{i}] step {s}" for i in (0, 1) for s in (1, 2)]
    followed = tfjob(cluster, "logs", name, "-f").output.splitlines()  # until both exited
    assert sorted(followed) == expected
    assert tfjob(cluster, "logs", name).output.splitlines() == expected
    one = tfjob(cluster, "logs", name, "--replica", "worker", "--index", "1", "--tail", "1")
    assert one.output == "step 2\n"

    deleted = tfjob(cluster, "delete", name)
    assert deleted.exit_code == 0 and deleted.output == f'tfjob.kubeflow.org "{name}" deleted\n'
    missing = tfjob(cluster, "describe", name)
    assert missing.exit_code == 1
    assert f'Error from server (NotFound): tfjobs.kubeflow.org "{name}" not found' in missing.output


def test_wait_exit_codes(cluster, operator):
    failed = unique("cli-fail")
    tfjob(cluster, "submit", "-", input=yaml.safe_dump(python_job(failed, "raise SystemExit(1)")))
    assert tfjob(cluster, "wait", failed, "--timeout", "60").exit_code == 1
    slow = unique("cli-slow")
    tfjob(
        cluster,
        "submit",
        "-",
        input=yaml.safe_dump(python_job(slow, "import time; time.sleep(60)")),
    )
    result = tfjob(cluster, "wait", slow, "--timeout", "1")
    assert result.exit_code == 2 and "timed out" in result.output
    tfjob(cluster, "delete", failed, slow)


def test_invalid_job_shows_the_api_error_and_causes(cluster):
    job = python_job(unique("cli-bad"), "pass")
    job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"
    result = tfjob(cluster, "submit", "-", input=yaml.safe_dump(job))
    assert result.exit_code == 1
    assert result.output.startswith("Error from server (Invalid): ")
    assert "  spec.tfReplicaSpecs.Worker.replicas: " in result.output


def test_example_runs_on_the_local_cluster(cluster, operator):
    name = unique("cli-example")
    result = tfjob(cluster, "submit", "--example", "tf-config", "--name", name, "--wait")
    assert result.exit_code == 0, result.output
    logs = tfjob(cluster, "logs", name, "--replica", "worker", "--index", "0").output
    assert logs.startswith(f"task worker 0 on {name}-worker-0\ncluster ")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_finds_the_plugin(cluster, operator, tmp_path):
    """kubectl (a dispatcher binary here) runs ``kubectl-tfjob`` from PATH as ``kubectl tfjob``."""
    name = unique("plugin")
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "KUBECONFIG": cluster.kubeconfig,
        "HOME": str(tmp_path),
    }
    run = {"capture_output": True, "text": True, "env": env, "timeout": 60}
    plugins = subprocess.run(["kubectl", "plugin", "list"], **run)
    assert str(BIN / "kubectl-tfjob") in plugins.stdout, plugins.stderr
    job = yaml.safe_dump(python_job(name, "pass"))
    submitted = subprocess.run(["kubectl", "tfjob", "submit", "-", "--wait"], input=job, **run)
    assert submitted.returncode == 0, submitted.stderr
    listed = subprocess.run(["kubectl", "tfjob", "list"], **run)
    assert any(line.split()[:2] == [name, "Succeeded"] for line in listed.stdout.splitlines())
    usage = subprocess.run(["kubectl", "tfjob", "--help"], **run)
    assert usage.stdout.startswith("Usage: kubectl tfjob ")


def row_of(cluster, name: str) -> list[str]:
    listed = tfjob(cluster, "list").output.splitlines()
    return next(line.split(maxsplit=2) for line in listed if line.startswith(name + " "))


def test_suspend_and_resume(cluster, operator, client, tmp_path):
    """``tfjob suspend`` deletes the job's pods (its process ends) and lists it Suspended;
    ``tfjob resume`` runs it again; a finished job cannot be suspended."""
    name = unique("cli-suspend")
    marker = tmp_path / "go"
    code = f"import os,time\nwhile not os.path.exists({str(marker)!r}): time.sleep(0.05)"
    tfjob(cluster, "submit", "-", input=yaml.safe_dump(python_job(name, code, workers=1)))
    client.wait_for_job(name, conditions=["Running"], timeout=60)

    result = tfjob(cluster, "suspend", name)
    assert result.exit_code == 0 and result.output == f"tfjob.kubeflow.org/{name} suspended\n"
    client.wait_for_job(name, conditions=["Suspended"], timeout=60)
    assert row_of(cluster, name)[1] == "Suspended"
    described = tfjob(cluster, "describe", name).output
    assert "Suspend:          true (suspended: no pods)" in described
    assert (
        tfjob(cluster, "suspend", name).output == f"tfjob.kubeflow.org/{name} already suspended\n"
    )
    wait = tfjob(cluster, "wait", name, "--timeout", "1")  # a suspended job does not finish
    assert wait.exit_code == 2 and "Suspended" in wait.output

    result = tfjob(cluster, "resume", name)
    assert result.exit_code == 0 and result.output == f"tfjob.kubeflow.org/{name} resumed\n"
    client.wait_for_job(name, conditions=["Running"], timeout=60)
    marker.touch()
    assert tfjob(cluster, "wait", name, "--timeout", "60").exit_code == 0
    finished = tfjob(cluster, "suspend", name)
    assert finished.exit_code == 1
    assert "has Succeeded: a finished job cannot be suspended" in finished.output
    missing = tfjob(cluster, "resume", unique("cli-missing"))
    assert missing.exit_code == 1 and "Error from server (NotFound)" in missing.output


def test_a_job_managed_elsewhere_is_shown_as_such(cluster, operator, client):
    name = unique("cli-elsewhere")
    job = python_job(name, "pass")
    job["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    tfjob(cluster, "submit", "-", input=yaml.safe_dump(job))
    # the operator writes nothing on it, so this is all anyone will see
    assert row_of(cluster, name)[1] == "Pending"
    assert row_of(cluster, name)[2].startswith("(managed by kueue.x-k8s.io/multikueue)")
    described = tfjob(cluster, "describe", name).output
    assert "Managed by:       kueue.x-k8s.io/multikueue (not this operator" in described
    assert "Queue:            team-a" in described
    assert tfjob(cluster, "resume", name).output == f"tfjob.kubeflow.org/{name} not suspended\n"
    result = tfjob(cluster, "suspend", name)
    assert result.exit_code == 0
    assert f"note: {name} is managed by kueue.x-k8s.io/multikueue" in result.stderr
    assert client.get(name)["spec"]["runPolicy"]["suspend"] is True
    assert client.get_pod_names(name) == [] and "status" not in client.get(name)
    tfjob(cluster, "delete", name)


@pytest.mark.parametrize(
    ("policy", "exit_code", "marker"),
    [("OnFailure", 1, "container restarted (run 2)"), ("ExitCode", 137, "pod recreated")],
)
def test_logs_follow_a_replica_through_its_restarts(
    cluster, operator, tmp_path, policy, exit_code, marker
):
    """Issue 27, Low: ``tfjob logs -f`` stopped at the first container exit, losing the
    restarted replica's output (restarted in place, or recreated under its name). The first
    run exits only once the follower has printed its line."""
    name = unique("restarts")
    gate, flag = tmp_path / "gate", tmp_path / "second-run"
    code = (
        "import os, sys, time\n"
        f"if os.path.exists({str(flag)!r}):\n"
        "    print('run 2', flush=True); sys.exit(0)\n"
        f"open({str(flag)!r}, 'w').close()\n"
        "print('run 1', flush=True)\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.05)\n"
        f"sys.exit({exit_code})\n"
    )
    job = python_job(name, code, workers=1, restart_policy=policy, clean_pod_policy="None")
    tfjob(cluster, "submit", "-", input=yaml.safe_dump(job))
    follower = subprocess.Popen(
        [str(BIN / "tfjob"), "--kubeconfig", cluster.kubeconfig, "logs", name, "-f"],
        stdout=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"},
    )
    assert follower.stdout is not None
    pod = f"{name}-worker-0"
    try:
        assert follower.stdout.readline().rstrip("\n") == f"[{pod}] run 1"
        gate.touch()
        rest = follower.stdout.read().splitlines()
        assert follower.wait(60) == 0
    finally:
        follower.kill()
    assert rest == [f"[{pod}] --- {pod}: {marker} ---", f"[{pod}] run 2"]
