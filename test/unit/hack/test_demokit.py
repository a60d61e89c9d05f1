"""hack/demokit: the demos' dispatch and the harness parts that need no cluster (the example
localised for the process kubelet, waiting, child processes and their teardown)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from demokit import cli, disruption, gang, harness, incluster, queue, tfjob


@pytest.mark.parametrize(
    ("argv", "demo", "passed"),
    [
        ([], "tfjob", []),
        (["--exitcode", "--keep"], "tfjob", ["--exitcode", "--keep"]),
        (["--gang", "volcano"], "gang", ["--gang", "volcano"]),
        (["--gang=kube-batch", "--keep"], "gang", ["--gang=kube-batch", "--keep"]),
        (["--in-cluster", "--overlay", "namespaced"], "incluster", ["--overlay", "namespaced"]),
        (["--queue", "--keep"], "queue", ["--queue", "--keep"]),
    ],
)
def test_the_arguments_pick_the_demo(monkeypatch, argv, demo, passed):
    calls: list[tuple[str, list[str]]] = []
    modules = (("tfjob", tfjob), ("gang", gang), ("incluster", incluster), ("queue", queue))
    for name, module in modules:
        monkeypatch.setattr(module, "main", lambda a, name=name: calls.append((name, a)) or 7)
    assert cli.main(argv) == 7
    assert calls == [(demo, passed)]


def test_the_disruption_variant_keeps_the_ps_and_chief_off_the_drained_worker_nodes():
    """Only worker nodes are drained: the PS (which keeps the model) and the chief go to the
    core pool, the workers to the worker pool; the budget is zero and disruptions are free."""
    job = disruption.with_disruption_policy(yaml.safe_load(harness.EXAMPLES[False].read_text()))
    pools = {
        rtype: spec["template"]["spec"]["nodeSelector"][disruption.POOL_LABEL]
        for rtype, spec in job["spec"]["tfReplicaSpecs"].items()
    }
    assert pools == {"PS": "core", "Chief": "core", "Worker": "workers"}
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["lifecyclePolicy"] == {"failure": {}}
    pool_args = " ".join(disruption.CLUSTER_ARGS)
    assert "name=core,count=1" in pool_args and "name=workers,count=2" in pool_args


def test_localise_runs_the_example_here_and_drops_only_the_code_volume(tmp_path):
    example = yaml.safe_load(harness.EXAMPLES[True].read_text())
    job = harness.localise(example, tmp_path)
    assert job is not example and example == yaml.safe_load(harness.EXAMPLES[True].read_text())
    for spec in job["spec"]["tfReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        assert not any("configMap" in v or "hostPath" in v for v in pod.get("volumes", []))
        for container in pod["containers"]:
            assert container["command"][:2] == [sys.executable, "-u"]
            assert container.get("workingDir") != harness.CONTAINER_CODE_DIR
            markers = [a for a in container["args"] if a.startswith("--crash-once-marker=")]
            assert markers in ([], [f"--crash-once-marker={tmp_path / 'crash-once-marker'}"])
    workers = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert any(a.startswith("--crash-once-marker=") for c in workers for a in c["args"])


def test_wait_until_returns_the_first_truthy_answer_and_names_what_timed_out():
    answers = iter([None, ValueError("not yet"), 0, "ready"])

    def poll():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert harness.wait_until(poll, timeout=10, what="the job") == "ready"
    with pytest.raises(harness.DemoError, match=r"timed out waiting for the pod \(boom\)"):
        harness.wait_until(lambda: (_ for _ in ()).throw(RuntimeError("boom")), 0.3, "the pod")


def test_stop_process_group_takes_the_childs_own_children_with_it(tmp_path):
    pid_file = tmp_path / "grandchild"
    script = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    harness.wait_until(lambda: pid_file.exists() and pid_file.read_text(), 20, "the grandchild")
    grandchild = int(pid_file.read_text())
    harness.stop_process_group(proc, grace=5)
    assert proc.returncode is not None
    harness.wait_until(lambda: not _alive(grandchild), 10, "the grandchild to go")


def test_a_failed_step_keeps_the_logs_and_stops_what_it_started(tmp_path, capsys):
    workdir = tmp_path / "demo"
    workdir.mkdir()

    def steps(started: list[harness.Background]) -> int:
        started.append(
            harness.Background("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"],
                               workdir / "sleeper.log")
        )  # fmt: skip
        raise harness.DemoError("the operator never became ready")

    begin = time.monotonic()
    assert harness.run_steps(steps, workdir, keep=False) == 1
    assert time.monotonic() - begin < 10  # stopped by SIGTERM, not waited out
    err = capsys.readouterr().err
    assert "demo failed: the operator never became ready" in err
    assert f"logs kept in {workdir}" in err and workdir.exists()


def test_a_successful_demo_removes_its_work_directory_unless_kept(tmp_path):
    for keep in (False, True):
        workdir = tmp_path / f"demo-{keep}"
        workdir.mkdir()
        assert harness.run_steps(lambda started: 0, workdir, keep=keep) == 0
        assert workdir.exists() is keep


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return status != "Z"


def test_the_queue_demos_kueue_retries_a_conflict_through_the_sdk():
    """A 409 from the SDK is Kueue's Conflict: the play reads the job again and redoes the
    change, as Kueue's requeued reconcile does."""
    from localcluster.kueue import Kueue, PodSetInfo
    from tf_operator.sdk import Conflict

    class Client:
        def __init__(self) -> None:
            self.job = queue.tfjob()
            self.job["metadata"]["resourceVersion"] = "1"
            self.patches: list[dict] = []

        def get(self, name: str, namespace: str) -> dict:
            return yaml.safe_load(yaml.safe_dump(self.job))

        def patch(self, name: str, patch: dict, namespace: str, patch_type: str) -> dict:
            self.patches.append(patch)
            if len(self.patches) == 1:
                raise Conflict(409, "Conflict", "the object has been modified")
            return self.job

    client = Client()
    kueue = Kueue(queue.SdkJobs(client))
    workload = kueue.workload("default", "mnist")
    kueue.admit(workload, [PodSetInfo(node_selector={"pool": "spot"})] * 2)
    assert len(client.patches) == 2 and client.patches[1]["spec"]["runPolicy"]["suspend"] is False


def test_lines_printed_by_threads_at_once_are_never_spliced():
    """The job's progress and a demo step beside it (the drain) print at once: each line
    reaches the terminal whole, and a prompt without a newline shows on flush."""
    import io
    import threading

    target = io.StringIO()
    out = harness.WholeLines(target)

    def chatter(tag: str) -> None:
        for i in range(500):
            print(f"{tag} line {i}", file=out)

    threads = [threading.Thread(target=chatter, args=(tag,)) for tag in "ABCD"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = target.getvalue().splitlines()
    assert sorted(lines) == sorted(f"{tag} line {i}" for tag in "ABCD" for i in range(500))
    print("press Enter", end="", file=out)
    out.flush()
    assert target.getvalue().endswith("\npress Enter")
