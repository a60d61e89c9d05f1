"""Two operators: exactly one acts; failover after SIGKILL; fast handover on SIGTERM."""

import signal
import time

import pytest

pytestmark = pytest.mark.integration

FAST = [
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
]


def _leader(sim, a, b):
    leaders = [op for op in (a, b) if op.is_leader()]
    return leaders[0] if len(leaders) == 1 else None


def test_one_leader_failover_on_kill_and_handover_on_term(sim, operators):
    a = operators(sim, *FAST)
    b = operators(sim, *FAST)
    leader = sim.wait_for(lambda: _leader(sim, a, b), 30, "one leader")
    follower = b if leader is a else a
    assert follower.metric("tf_operator_is_leader") == 0
    # A standby keeps warm caches, so it is ready (the Deployment keeps it in rotation).
    sim.wait_for(lambda: follower.http("/readyz")[0] == 200, 20, "standby ready")
    # Both watch (warm caches), only the leader runs workers and syncs.
    sim.create(sim.job("le-1", {"Worker": {}}))
    sim.wait_for(lambda: sim.pods("le-1"), 30, "pods of le-1")
    leader.wait_log(r'Finished syncing tfjob \\"default/le-1', 30)
    assert "Starting TFJob controller" not in follower.text()
    assert "Finished syncing tfjob" not in follower.text()

    # SIGKILL: no release; the follower takes over once the lease expires.
    begin = time.monotonic()
    leader.signal(signal.SIGKILL)
    leader.wait_exit(5)
    sim.wait_for(follower.is_leader, 20, "failover")
    assert time.monotonic() - begin >= 2.0  # had to wait for the lease to run out
    sim.create(sim.job("le-2", {"Worker": {}}))
    sim.wait_for(lambda: sim.pods("le-2"), 30, "pods of le-2 by the new leader")
    follower.wait_log(r'Finished syncing tfjob \\"default/le-2', 30)

    # SIGTERM: the lease is released, so a fresh standby takes over at its next retry. Its own
    # lease duration is long: without the release it could not take over for 30 s, which no
    # load on the test machine can blur.
    c = operators(
        sim,
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=2s",
        "--leader-elect-retry-period=500ms",
    )
    c.wait_log("attempting to acquire leader lease", 30)
    begin = time.monotonic()
    follower.signal(signal.SIGTERM)
    assert follower.wait_exit(10) == 0
    sim.wait_for(c.is_leader, 20, "handover")
    assert time.monotonic() - begin < 20.0  # well before its 30 s lease would have run out


def test_an_operator_leading_beside_one_on_the_other_lock_kind_says_so(sim, operators):
    """An `endpoints`-lock operator and a `leases`-lock operator of one name share no lock, so
    both lead (a rolling update that changes the lock kind): the second says so, naming the
    first and the migration lock; the first, leading alone when it started, logs nothing."""
    first = operators(sim, *FAST, "--leader-elect-resource-lock=endpoints")
    sim.wait_for(first.is_leader, 30, "the endpoints-lock operator leads")
    second = operators(sim, *FAST, "--leader-elect-resource-lock=leases")
    sim.wait_for(second.is_leader, 30, "the leases-lock operator leads too")
    warned = second.wait_log(
        r"another operator leads beside this one through the endpoints lock "
        r"default/tf-operator held by (\S+):",
        30,
    )
    assert warned.group(1) in first.text()  # its identity, as the first logged it
    assert "endpointsleases" in second.text()
    assert "another operator leads beside this one" not in first.text()
