"""Tables, ages, describe text and the progress view of the ``tfjob`` command."""

import io
import json
from datetime import UTC, datetime

import yaml

from tf_operator.cli.describe import describe
from tf_operator.cli.output import render_jobs, table
from tf_operator.cli.progress import ProgressView

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def job(name="j", state="Running", active=2, succeeded=1) -> dict:
    return {
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T11:57:00Z"},
        "spec": {"tfReplicaSpecs": {"PS": {"replicas": 1}, "Worker": {}}},
        "status": {
            "conditions": [{"type": state, "status": "True"}],
            "replicaStatuses": {"Worker": {"active": active, "succeeded": succeeded}},
            "startTime": "2026-01-01T11:58:00Z",
        },
    }


def test_table_aligns_columns():
    assert table(["A", "LONGER"], [["x", "1"], ["yyyy", "2"]]) == (
        "A      LONGER\nx      1\nyyyy   2"
    )


def test_render_jobs_formats(monkeypatch):
    jobs = [job()]
    plain = render_jobs(jobs, None).splitlines()
    assert plain[0].split() == ["NAME", "STATE", "AGE"] and plain[1].split()[:2] == ["j", "Running"]
    wide = render_jobs(jobs, "wide", all_namespaces=True).splitlines()
    assert wide[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert wide[1].split()[:7] == [
        "ns",
        "j",
        "Running",
        wide[1].split()[3],
        "PS=1,Worker=1",
        "2",
        "1",
    ]
    assert yaml.safe_load(render_jobs(jobs, "yaml"))["items"][0]["metadata"]["name"] == "j"
    assert json.loads(render_jobs(jobs, "json"))["kind"] == "List"
    assert render_jobs(jobs, "name") == "tfjob.kubeflow.org/j"


def test_describe_lists_replicas_conditions_and_events():
    pod = {
        "metadata": {
            "name": "j-worker-0",
            "labels": {"tf-replica-type": "worker", "tf-replica-index": "0"},
        },
        "spec": {"nodeName": "node-1"},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "tensorflow",
                    "restartCount": 2,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "Error"}},
                }
            ],
        },
    }
    event = {
        "metadata": {"creationTimestamp": "2026-01-01T11:59:00Z"},
        "type": "Warning",
        "reason": "Restarting",
        "message": "pod j-worker-0 restarted",
        "lastTimestamp": "2026-01-01T11:59:30Z",
    }
    text = describe(job(), [pod], [event], now=NOW)
    assert "Created:          2026-01-01T11:57:00Z (3m ago)" in text
    replica = next(line for line in text.splitlines() if "j-worker-0" in line and "node-1" in line)
    assert replica.split() == ["worker", "0", "j-worker-0", "node-1", "Running", "2", "137", "-"]
    assert "Warning   Restarting   30s   1       pod j-worker-0 restarted" in text
    assert describe(job(), [], [], now=NOW).count("<none>") == 2


def test_suspended_and_managed_elsewhere_jobs_are_shown_so():
    suspended = job("s", state="Suspended", active=0)
    suspended["spec"]["runPolicy"] = {"suspend": True}
    suspended["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    elsewhere = job("m", state="Created", active=0)
    elsewhere["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    rows = [
        line.split(maxsplit=2) for line in render_jobs([suspended, elsewhere], None).split("\n")
    ]
    assert rows[1][:2] == ["s", "Suspended"]
    assert rows[2][1] == "Created" and rows[2][2].startswith(
        "(managed by kueue.x-k8s.io/multikueue)"
    )

    text = describe(suspended, [], [], now=NOW)
    assert "Suspend:          true (suspended: no pods)" in text
    assert "Managed by:       kubeflow.org/training-operator" in text
    assert "Queue:            team-a" in text
    resuming = dict(suspended, spec={**suspended["spec"], "runPolicy": {"suspend": False}})
    assert "Suspend:          false (being resumed)" in describe(resuming, [], [], now=NOW)
    text = describe(elsewhere, [], [], now=NOW)
    assert "Suspend:          false" in text and "Queue:" not in text
    assert (
        "Managed by:       kueue.x-k8s.io/multikueue (not this operator: it creates nothing" in text
    )


def test_describe_reads_the_clean_pod_policy_where_it_is_written():
    def policy(spec: dict, annotations: dict | None = None) -> str:
        described = job()
        described["spec"].update(spec)
        described["metadata"]["annotations"] = annotations or {}
        line = next(x for x in describe(described, [], [], now=NOW).split("\n") if "Clean" in x)
        return line.split(":", 1)[1].strip()

    assert policy({"runPolicy": {"cleanPodPolicy": "All"}}) == "All"
    assert policy({"cleanPodPolicy": "None"}) == "None"
    assert policy({}).startswith("Running (default")
    v19 = {"tf-operator.kubeflow.org/defaults": "v1.9"}
    assert policy({}, v19) == "None (v1.9 default)"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_progress_prints_a_line_per_change_only():
    out, clock = io.StringIO(), Clock()
    view = ProgressView(out, tty=False, clock=clock)
    view.update(job(state="Created", active=0, succeeded=0))
    clock.now += 5
    view.update(job(state="Created", active=0, succeeded=0))  # same: nothing printed
    view.update(job(active=2, succeeded=0))
    view.close()
    assert out.getvalue().splitlines() == [
        "[0s] Created | PS: active 0  succeeded 0  failed 0 | Worker: active 0  succeeded 0  failed 0",
        "[5s] Running | PS: active 0  succeeded 0  failed 0 | Worker: active 2  succeeded 0  failed 0",
    ]
    assert "\033" not in out.getvalue()


def test_tty_progress_redraws_in_place():
    out, clock = io.StringIO(), Clock()
    view = ProgressView(out, tty=True, clock=clock)
    view.update(job(active=1, succeeded=0))
    clock.now += 75
    view.update(job(state="Succeeded", active=0, succeeded=2))
    view.close()
    text = out.getvalue()
    assert text.count("\033[3F") >= 2  # moved up over the 3 lines drawn before, then redrew
    last = text.rsplit("\033[3F", 1)[1].replace("\033[2K", "").splitlines()
    assert last == [
        "TFJob ns/j: Succeeded (75s)",
        "  PS      active 0  succeeded 0  failed 0",
        "  Worker  active 0  succeeded 2  failed 0",
    ]


def test_progress_lists_a_pytorchjobs_replica_types_before_any_status():
    from tf_operator.cli.progress import replica_lines

    pytorchjob = {
        "kind": "PyTorchJob",
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}}},
        "status": {"replicaStatuses": {"Worker": {"active": 2}}},
    }
    assert replica_lines(pytorchjob) == [
        ("Master", "active 0  succeeded 0  failed 0"),
        ("Worker", "active 2  succeeded 0  failed 0"),
    ]


def test_describe_shows_the_jobs_pod_group_when_it_has_one():
    from tf_operator.sdk.podgroup import PodGroupInfo

    group = PodGroupInfo("g", "scheduling.k8s.io/v1beta1", 2, "Unschedulable", "no room")
    text = describe(job(), [], [], now=NOW, group=group)
    assert "PodGroup:         g (scheduling.k8s.io/v1beta1, min 2) Unschedulable: no room" in text
    assert "PodGroup:" not in describe(job(), [], [], now=NOW)


def test_render_jobs_lifecycle_columns():
    from tf_operator.sdk.lifecycle import BLOCKED_PREFIX

    plain = job()
    policed = job("p")
    policed["spec"]["runPolicy"] = {"backoffLimit": 3}
    policed["spec"]["lifecyclePolicy"] = {"startup": {}}
    policed["status"]["exitCodeRestarts"] = {"count": 2}
    policed["status"]["conditions"].insert(
        0, {"type": "Created", "status": "True", "message": f"x{BLOCKED_PREFIX}exceeded quota"}
    )
    assert render_jobs([plain], None).splitlines()[0].split() == ["NAME", "STATE", "AGE"]
    lines = render_jobs([plain, policed], None).splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE", "RESTARTS", "BLOCKED"]
    assert lines[1].split()[-2:] == ["-", "-"]
    assert "2/3" in lines[2].split() and lines[2].rstrip().endswith("exceeded quota")


def test_render_jobs_shows_why_a_job_without_a_lifecycle_policy_is_blocked():
    """What no scheduler can satisfy is told on every job (D156, D157): the list has a BLOCKED
    column once a job is blocked, and RESTARTS only once a job has a policy."""
    from tf_operator.sdk.lifecycle import BLOCKED_PREFIX

    plain = job()
    waiting = job("w")
    waiting["status"]["conditions"].insert(
        0, {"type": "Created", "status": "True", "message": f"x{BLOCKED_PREFIX}minAvailable 10"}
    )
    lines = render_jobs([plain, waiting], None).splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE", "BLOCKED"]
    assert lines[1].split()[-1] == "-"
    assert lines[2].rstrip().endswith("minAvailable 10")


def test_describe_tells_why_a_job_without_a_lifecycle_policy_is_blocked():
    """What no scheduler can satisfy is told on every job (D156): describe shows it, and
    nothing for a job that is not blocked."""
    why = "runPolicy.schedulingPolicy.minAvailable 10 is above the job's 1 replicas: ..."
    blocked = job(state="Created")
    blocked["status"]["conditions"][0]["message"] = f"TFJob j is created. Blocked: {why}"
    assert f"Blocked:          {why}" in describe(blocked, [], [], now=NOW).splitlines()
    lines = describe(job(), [], [], now=NOW).splitlines()
    assert not [line for line in lines if line.startswith("Blocked:")]
