"""Pure pod-status rules: phase (getPhase), restart decisions, QoS class."""

import pytest

from localcluster.kubelet.podstatus import (
    RUNNING,
    TERMINATED,
    WAITING,
    ContainerRecord,
    PodRecord,
    apply_exit,
    build_status,
    pod_phase,
    qos_class,
    should_restart,
)


def record(policy, *states):
    rec = PodRecord(
        "ns", "p", "uid", {"spec": {"restartPolicy": policy}}, "127.1.0.1", "127.0.0.1", "t"
    )
    for i, (state, code) in enumerate(states):
        rec.containers[f"c{i}"] = ContainerRecord(f"c{i}", state=state, exit_code=code)
    return rec


@pytest.mark.parametrize(
    "policy,states,phase",
    [
        ("Never", [(WAITING, None)], "Pending"),
        ("Never", [(RUNNING, None), (WAITING, None)], "Pending"),
        ("Never", [(RUNNING, None), (TERMINATED, 0)], "Running"),
        ("Never", [(TERMINATED, 0), (TERMINATED, 0)], "Succeeded"),
        ("Never", [(TERMINATED, 0), (TERMINATED, 2)], "Failed"),
        ("OnFailure", [(TERMINATED, 0)], "Succeeded"),
        ("Always", [(TERMINATED, 0)], "Running"),
    ],
)
def test_pod_phase(policy, states, phase):
    assert pod_phase(record(policy, *states)) == phase


@pytest.mark.parametrize(
    "policy,code,restart",
    [
        ("Always", 0, True),
        ("Always", 1, True),
        ("OnFailure", 0, False),
        ("OnFailure", 137, True),
        ("Never", 1, False),
    ],
)
def test_should_restart(policy, code, restart):
    assert should_restart(policy, code) is restart


def test_exit_by_signal_and_terminating_pods_never_restart():
    rec = record("Always", (RUNNING, None))
    rec.terminating = True
    container = rec.containers["c0"]
    assert apply_exit(rec, container, 137, 0.0) is False
    status = build_status(rec, 0.0)["containerStatuses"][0]
    terminated = status["state"]["terminated"]
    assert (terminated["exitCode"], terminated["signal"], terminated["reason"]) == (137, 9, "Error")


def test_condition_transition_time_is_kept_while_status_is_unchanged():
    rec = record("Always", (RUNNING, None))
    first = {c["type"]: c for c in build_status(rec, 100.0)["conditions"]}
    again = {c["type"]: c for c in build_status(rec, 200.0)["conditions"]}
    assert first["Ready"]["lastTransitionTime"] == again["Ready"]["lastTransitionTime"]
    rec.containers["c0"].state = WAITING
    changed = {c["type"]: c for c in build_status(rec, 300.0)["conditions"]}
    assert changed["Ready"]["lastTransitionTime"] != first["Ready"]["lastTransitionTime"]


def test_qos_class():
    def pod(*resources):
        return {
            "spec": {
                "containers": [{"name": str(i), "resources": r} for i, r in enumerate(resources)]
            }
        }

    assert qos_class(pod({})) == "BestEffort"
    assert qos_class(pod({"requests": {"cpu": "1"}})) == "Burstable"
    full = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1Gi"}}
    assert qos_class(pod(full, full)) == "Guaranteed"
    assert qos_class(pod(full, {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}})) == "Burstable"
