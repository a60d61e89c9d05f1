"""Every shell command in README.md is run, here or by the test named for it.

The README's ``sh`` blocks are parsed; each command must match one entry of ``COVERAGE``.
Commands marked ``RUN`` are executed here, literally, in README order against a local cluster
started by the README's own command (only the kubeconfig path is swapped for a temporary one).
The others name the test or target that runs them, and that test must exist.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
README_KUBECONFIG = "/tmp/lc.kubeconfig"
RUN = "run here"

# The README commands this test runs, by role.
RUN_STEPS = {
    "cluster": ".venv/bin/tf-operator-localcluster --kubelet process --kubeconfig /tmp/lc.kubeconfig",
    "crd": "kubectl --kubeconfig /tmp/lc.kubeconfig apply -f manifests/base/crd.yaml",
    "operator": (
        ".venv/bin/tf-operator --kubeconfig /tmp/lc.kubeconfig --monitoring-port 0"
        " --json-log-format=false"
    ),
    "apply_k": "kubectl apply -k manifests/overlays/standalone",
    "example": "kubectl apply -f examples/v1/dist-mnist/tf_job_mnist.yaml",
    "get": "kubectl get tfjobs",
    "apply_v1beta2": "kubectl apply -f examples/v1beta2/dist-mnist/tf_job_mnist.yaml",
    "apply_v1_9": "kubectl apply -f examples/v1/kueue/tf_job_mnist.yaml",
    "get_v1beta2": "kubectl get tfjobs.v1beta2.kubeflow.org",
}

# command (as written in the README) -> how it is verified
COVERAGE = {
    "make demo": "test/integration/operator/test_demo.py::test_demo_succeeds_with_falling_loss",
    "make test": ".ci/run",
    "make demo ARGS=--exitcode": (
        "test/integration/operator/test_demo.py::test_demo_exitcode_variant_restarts_worker"
    ),
    'make demo ARGS="--tfjob my-tfjob.yaml"': (
        "test/integration/operator/test_demo.py::test_demo_with_user_job_that_fails"
    ),
    "make demo ARGS=--dashboard": (
        "test/integration/tools/test_demo_dashboard.py"
        "::test_demo_prints_a_dashboard_url_that_serves_the_job"
    ),
    'make demo ARGS="--gang volcano"': (
        "test/integration/gang/test_demo_gang.py::"
        "test_gang_demo_schedules_master_on_cpu_and_workers_on_gpu"
    ),
    'make demo ARGS="--gang coscheduling"': (
        "test/integration/gang/test_demo_gang.py::"
        "test_gang_demo_schedules_master_on_cpu_and_workers_on_gpu"
    ),
    'make demo ARGS="--gang kubernetes"': (
        "test/integration/gang/test_demo_gang.py::"
        "test_kubernetes_gang_demo_runs_one_job_whole_while_the_other_waits_unbound"
    ),
    'make demo ARGS="--gang kubernetes --real"': (
        "test/integration/gang/test_demo_gang.py::"
        "test_kubernetes_gang_demo_runs_one_job_whole_while_the_other_waits_unbound"
    ),
    'make demo ARGS="--gang volcano --without-task-spec"': (
        "test/integration/gang/test_demo_gang.py::"
        "test_without_task_spec_the_gang_stays_pending_and_the_demo_says_why"
    ),
    "make demo ARGS=--in-cluster": "test/integration/incluster/test_demo_incluster.py::test_in_cluster_demo",
    "make demo ARGS=--queue": (
        "test/integration/operator/test_demo_queue.py::test_queue_demo_admits_evicts_and_completes"
    ),
    "make demo ARGS=--real": (
        "test/integration/operator/test_demo.py::test_demo_succeeds_with_falling_loss"
    ),
    "make demo ARGS=--pytorch": (
        "test/integration/operator/test_demo_pytorch.py::test_pytorch_demo_trains_to_success"
    ),
    **{
        f"make demo ARGS=--{flag}": (
            "test/integration/operator/test_demo_kinds.py::"
            "test_the_kinds_demo_runs_its_example_to_success"
        )
        for flag in ("xgboost", "jax", "paddle")
    },
    **{command: RUN for command in RUN_STEPS.values()},
}


def readme_commands() -> list[str]:
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.S):
        for line in block.splitlines():
            command = re.split(r"\s{2,}#", line)[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def test_every_readme_command_is_covered():
    commands = readme_commands()
    assert commands[:2] == ["make demo", "make test"], "the README must open with the two commands"
    unknown = [c for c in commands if c not in COVERAGE]
    assert not unknown, f"README commands no test runs: {unknown}"
    for command, where in COVERAGE.items():
        assert command in commands, f"stale coverage entry: {command}"
        if where == RUN:
            continue
        path, _, name = where.partition("::")
        assert (ROOT / path).exists(), where
        if name:
            assert f"def {name}(" in (ROOT / path).read_text(), where


def test_the_readme_shows_the_example_files_as_they_are():
    """A ``yaml`` block whose first line names a file under examples/ shows that file whole."""
    shown = 0
    for block in re.findall(r"```yaml\n(.*?)```", README.read_text(), flags=re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("# examples/"):
            assert rest == (ROOT / first[2:]).read_text(), first
            shown += 1
    assert shown >= 2


def _argv(command: str, kubeconfig: Path) -> list[str]:
    argv = shlex.split(command.replace(README_KUBECONFIG, str(kubeconfig)))
    if argv[0].startswith(".venv/bin/"):
        argv[0] = str(Path(sys.executable).parent / Path(argv[0]).name)
    return argv


def _start(argv: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log.open("wb"), text=True
    )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _run(argv: list[str], env: dict) -> str:
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.integration
def test_local_cluster_commands_run_as_written(tmp_path):
    assert set(RUN_STEPS.values()) <= set(readme_commands())
    kubeconfig = tmp_path / "lc.kubeconfig"
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("KUBECONFIG", None)
    background: list[subprocess.Popen] = []
    try:
        cluster = _start(_argv(RUN_STEPS["cluster"], kubeconfig), env, tmp_path / "lc.log")
        background.append(cluster)
        assert cluster.stdout is not None
        ready = cluster.stdout.readline().split()
        assert ready[:1] == ["ready"] and ready[2] == str(kubeconfig), ready
        _run(_argv(RUN_STEPS["crd"], kubeconfig), env)
        operator = _start(_argv(RUN_STEPS["operator"], kubeconfig), env, tmp_path / "op.log")
        background.append(operator)
        cluster_env = dict(env, KUBECONFIG=str(kubeconfig))
        _run(_argv(RUN_STEPS["apply_k"], kubeconfig), cluster_env)
        _run(_argv(RUN_STEPS["example"], kubeconfig), cluster_env)
        listing = _run(_argv(RUN_STEPS["get"], kubeconfig), cluster_env)
        assert "dist-mnist" in listing and "STATE" in listing, listing
        _run(_argv(RUN_STEPS["apply_v1beta2"], kubeconfig), cluster_env)
        _run(_argv(RUN_STEPS["apply_v1_9"], kubeconfig), cluster_env)
        listing = _run(_argv(RUN_STEPS["get_v1beta2"], kubeconfig), cluster_env)
        names = [line.split()[0] for line in listing.splitlines()[1:]]
        assert {"dist-mnist-v1beta2", "dist-mnist-queued"} <= set(names), listing
        assert operator.poll() is None, (tmp_path / "op.log").read_text()[-2000:]
    finally:
        for proc in reversed(background):
            _stop(proc)
    assert cluster.returncode == 0
