"""Which run of a replica's container a pod shows (the follower streams each run once)."""

import pytest

from tf_operator.sdk.follow import run_key


def pod(uid="u1", restarts=0, state=None, name="tensorflow"):
    statuses = [{"name": name, "restartCount": restarts, "state": state or {"running": {}}}]
    return {"metadata": {"uid": uid}, "status": {"containerStatuses": statuses}}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (pod(), ("u1", 0)),
        (pod(restarts=2, state={"terminated": {"exitCode": 1}}), ("u1", 2)),
        (pod(state={"waiting": {"reason": "CrashLoopBackOff"}}), None),  # nothing to read yet
        (pod(name="sidecar"), None),
        ({"metadata": {"uid": "u"}}, None),
        (pod(uid="u2", restarts=0), ("u2", 0)),
    ],
)
def test_run_key(given, expected):
    assert run_key(given, "tensorflow") == expected
