"""``spec.lifecyclePolicy`` decodes and encodes exactly what was written (D100): every section,
and keys it does not model, so the copy kept in the status is the policy as given."""

from tf_operator.apis.common.v1.lifecycle import LifecyclePolicy, policy_in_force

FULL = {
    "success": {"rule": "MinWorkers", "minWorkersPercent": 50, "waitForEvaluators": True},
    "failure": {
        "countDisruptions": True,
        "replicaTypeLimits": {"Worker": 3},
        "rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
            {"action": "RestartJob", "onReplicaTypes": ["Worker"], "onDisruption": False},
        ],
    },
    "startup": {"deadlineSeconds": 300, "action": "RestartJob"},
    "later": {"kept": True},
}


def test_a_policy_round_trips_whole():
    assert LifecyclePolicy.from_dict(FULL, "spec.lifecyclePolicy").to_dict() == FULL


def test_the_status_copy_wins_over_the_spec():
    spec = {"lifecyclePolicy": {"success": {"rule": "Chief"}}}
    status = {"lifecyclePolicy": FULL}
    policy = policy_in_force(spec, status)
    assert policy is not None and policy.to_dict() == FULL
    only_spec = policy_in_force(spec, {})
    assert only_spec is not None and only_spec.to_dict() == spec["lifecyclePolicy"]
    assert policy_in_force({}, {}) is None
