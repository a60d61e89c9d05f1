"""Our own tools know XGBoostJobs, JAXJobs and PaddleJobs: the SDK's client of each kind
(``XGBoostJobClient``, ``JAXJobClient``, ``PaddleJobClient``) and the ``xgboostjob``,
``jaxjob`` and ``paddlejob`` commands (the ``tfjob`` command's program told the kind) submit,
wait for, list, describe and read the logs of a job running the kind's example program."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tf_operator.cli.main import cli
from tf_operator.sdk import (
    JAXJOB,
    PADDLEJOB,
    XGBOOSTJOB,
    Invalid,
    JAXJobClient,
    PaddleJobClient,
    XGBoostJobClient,
    job_state,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]

# kind info, client class, replicas, program, the pod whose log tells, what it says
CASES = {
    "xgboostjob": (
        XGBOOSTJOB,
        XGBoostJobClient,
        {"Master": 1, "Worker": 1},
        "xgboost/smoke-dist/xgboost_dist.py",
        "master",
        "rmse",
    ),
    "jaxjob": (JAXJOB, JAXJobClient, {"Worker": 2}, "jax/cpu-demo/jax_dist.py", "worker", "psum 2"),
    "paddlejob": (
        PADDLEJOB,
        PaddleJobClient,
        {"Worker": 2},
        "paddle/simple-cpu/run_check.py",
        "worker",
        "allreduce 1",
    ),
}


def job(kind, name: str, replicas: dict[str, int], program: str) -> dict:
    path = ROOT / "examples" / program
    container = {
        "name": kind.container,
        "image": "python:3.11-slim",
        "command": [sys.executable, "-u", path.name],
        "workingDir": str(path.parent),
    }
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None"},
            kind.specs_field: {
                rtype: {"replicas": n, "template": {"spec": {"containers": [dict(container)]}}}
                for rtype, n in replicas.items()
            },
        },
    }


@pytest.mark.parametrize("script", list(CASES))
def test_the_sdk_client_of_the_kind(cluster, operator, script):
    kind, client_class, replicas, program, leader, says = CASES[script]
    name = f"sdk-{script[:3]}"
    with client_class(cluster.kubeconfig, "default") as client:
        assert client.create(job(kind, name, replicas, program))["kind"] == kind.kind
        final = client.wait_for_job(name, timeout=90)
        assert job_state(final) == "Succeeded"
        assert client.get_pod_names(name) == sorted(
            f"{name}-{t.lower()}-{i}" for t, n in replicas.items() for i in range(n)
        )
        lines = [
            line for pod, line in client.get_logs(name, replica_type=leader) if pod.endswith("-0")
        ]
        assert any(says in line for line in lines), lines
        bad = job(kind, f"{name}-bad", replicas, program)
        bad["spec"][kind.specs_field]["Worker"]["template"]["spec"]["containers"][0]["image"] = ""
        with pytest.raises(Invalid, match="every container needs an image"):
            client.create(bad)
        client.delete(name)


@pytest.mark.parametrize("script", list(CASES))
def test_the_kinds_command(cluster, operator, script, tmp_path):
    kind, _, replicas, program, leader, says = CASES[script]

    def run(*args: str) -> str:
        result = CliRunner().invoke(
            cli, ["--kubeconfig", cluster.kubeconfig, "-n", "default", *args], obj=kind
        )
        assert result.exit_code == 0, result.output
        return result.output

    name = f"cli-{script[:3]}"
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job(kind, name, replicas, program)))
    noun = f"{script}.kubeflow.org/{name}"
    out = run("submit", str(path), "--wait", "--timeout", "90")
    assert f"{noun} created" in out and f"{noun} succeeded" in out
    assert noun in run("list", "-o", "name").split()
    described = run("describe", name)
    assert "Succeeded" in described and f"{leader}   0       {name}-{leader}-0" in described
    assert says in run("logs", name, "--replica", leader)
