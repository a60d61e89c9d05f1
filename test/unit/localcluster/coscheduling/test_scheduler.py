"""The coscheduling scheduler in a live local cluster: Permit holds a gang until minMember of
it are assumed and then binds it at once; waits end in rejection and back-off; PreFilter's
pod count and minResources; PostFilter; the shared ledger; PodGroup phases from the
controller."""

from __future__ import annotations

from localcluster.nodepool import NodePool
from localcluster.testing import wait_for


def one_node(cpu: str = "4") -> list[NodePool]:
    return [NodePool(name="n", cpu=cpu, memory="8Gi")]


def failures(c, *names: str) -> list[str]:
    """The FailedScheduling messages of these pods that came after they had been held."""
    events = sorted(
        (e for n in names for e in c.events(n) if e["reason"] == "FailedScheduling"),
        key=lambda e: int(e["metadata"]["resourceVersion"]),
    )
    return [
        e["message"] for e in events if e["message"].startswith("0/1 nodes are available: 1 re")
    ]


def test_a_gang_waits_at_permit_holding_its_room_then_is_bound_at_once(cosched):
    c = cosched(one_node())
    c.podgroup("g", 3, scheduleTimeoutSeconds=120)  # no wait ends during the test
    c.pod("g-0", "g")
    c.pod("g-1", "g")
    # the third member exists (PreFilter counts it) but no scheduler serves it yet
    c.pod("g-2", "g", scheduler="nobody")
    c.wait_waiting("g-0", "g-1")
    assert c.bound("g-0", "g-1") == {"g-0": None, "g-1": None}
    assert (c.assumed_on("g-0"), c.assumed_on("g-1")) == ("n-0", "n-0")
    # the room they hold is taken for every scheduler of the cluster: 2 of 4 CPUs are left
    c.pod("d-0", cpu="3", scheduler="default-scheduler")
    wait_for(lambda: c.message("d-0"), 30, what="d-0 reported unschedulable")
    assert c.message("d-0") == "0/1 nodes are available: 1 Insufficient cpu."
    c.delete_pod("d-0")
    c.delete_pod("g-2")
    c.pod("g-2", "g")
    c.wait_bound("g-0", "g-1", "g-2")
    assert c.scheduler.waiting_pods() == []
    for name in ("g-0", "g-1", "g-2"):
        scheduled = [e for e in c.events(name) if e["reason"] == "Scheduled"]
        assert [(e["message"], e["source"]["component"]) for e in scheduled] == [
            (f"Successfully assigned default/{name} to n-0", "scheduler-plugins-scheduler")
        ]


def test_a_wait_that_ends_rejects_the_gang_which_backs_off_and_tries_again(cosched):
    c = cosched(one_node())
    c.podgroup("g", 3, scheduleTimeoutSeconds=1)
    c.pod("g-0", "g")
    c.pod("g-1", "g")
    c.pod("g-2", "g", scheduler="nobody")
    c.wait_waiting("g-0", "g-1")
    # the first to wait times out; Unreserve rejects its sibling; each is told once
    wait_for(lambda: len(failures(c, "g-0", "g-1")) == 2, 10, what="both rejected")
    assert failures(c, "g-0", "g-1") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin Coscheduling.",
        "0/1 nodes are available: 1 rejection in Unreserve.",
    ]
    # they backed off and are held again (their room released meanwhile)
    wait_for(lambda: c.assumed_on("g-0") is None, 10, what="g-0's room released")
    c.wait_waiting("g-0", "g-1")
    assert c.bound("g-0", "g-1") == {"g-0": None, "g-1": None}


def test_too_few_pods_are_refused_at_prefilter_until_the_group_is_whole(cosched):
    c = cosched(one_node())
    c.podgroup("g", 2)
    c.pod("g-0", "g")
    c.wait_event(
        "g-0",
        "0/1 nodes are available: pre-filter pod g-0 cannot find enough sibling pods, current "
        "pods number: 1, minMember of group: 2. PodGroup default/g gets rejected due to Pod g-0 "
        "is unschedulable even after PostFilter.",
    )
    assert c.assumed_on("g-0") is None  # refused before any node was tried
    c.pod("g-1", "g")
    c.wait_bound("g-0", "g-1")


def test_min_resources_beyond_the_free_room_are_refused_until_a_node_comes(cosched):
    c = cosched(one_node())
    c.scheduler.pause()
    c.podgroup("g", 2, minResources={"cpu": "6"})
    c.pod("g-0", "g")
    c.pod("g-1", "g")
    c.scheduler.resume()
    c.wait_event(
        "g-0",
        "0/1 nodes are available: resource gap: map[cpu:2]. PodGroup default/g gets rejected "
        "due to Pod g-0 is unschedulable even after PostFilter.",
    )
    assert c.assumed_on("g-0") is None
    c.add_node("m-0", cpu="4", memory="8Gi")
    c.wait_bound("g-0", "g-1")


def test_a_member_that_fits_nowhere_takes_the_waiting_ones_down(cosched):
    c = cosched(one_node(cpu="2"))
    c.scheduler.pause()  # all three queued first: they are tried in name order
    c.podgroup("g", 3)
    for i in range(3):
        c.pod(f"g-{i}", "g")
    c.scheduler.resume()
    # two fit and wait (in name order), the third finds no node: PostFilter rejects the two
    c.wait_event(
        "g-2",
        "0/1 nodes are available: 1 Insufficient cpu. PodGroup default/g gets rejected due to "
        "Pod g-2 is unschedulable even after PostFilter.",
    )
    for name in ("g-0", "g-1"):
        c.wait_event(name, "0/1 nodes are available: 1 optimistic rejection in PostFilter.")
    assert c.bound("g-0", "g-1", "g-2") == {"g-0": None, "g-1": None, "g-2": None}
    c.add_node("m-0", cpu="2", memory="8Gi")
    c.wait_bound("g-0", "g-1", "g-2")


def test_deleting_a_waiting_pod_rejects_its_siblings(cosched):
    c = cosched(one_node())
    c.podgroup("g", 3)
    c.pod("g-0", "g")
    c.pod("g-1", "g")
    c.pod("g-2", "g", scheduler="nobody")
    c.wait_waiting("g-0", "g-1")
    c.delete_pod("g-0")
    wait_for(lambda: failures(c, "g-1"), 10, what="g-1 rejected")
    assert failures(c, "g-1") == ["0/1 nodes are available: 1 rejection in Unreserve."]
    wait_for(lambda: c.assumed_on("g-0") is None, 10, what="g-0 forgotten")


def test_pods_without_a_group_are_scheduled_alone(cosched):
    c = cosched(one_node(cpu="1"))
    c.pod("plain-0")
    c.pod("plain-1")
    c.wait_bound("plain-0")
    c.wait_event("plain-1", "0/1 nodes are available: 1 Insufficient cpu. can not find pod group.")


def test_a_pod_naming_a_missing_podgroup_waits_for_it(cosched):
    c = cosched(one_node())
    c.pod("g-0", "g")
    c.wait_event("g-0", "0/1 nodes are available: 1 PodGroup not found.")
    assert c.assumed_on("g-0") is None
    c.podgroup("g", 1)
    c.wait_bound("g-0")


def test_the_controller_walks_the_phases_of_a_gang(cosched):
    c = cosched(one_node())
    c.podgroup("g", 2)
    wait_for(lambda: c.phase("g") == "Pending", 10, what="Pending")
    c.pod("g-0", "g", run_seconds=1)
    c.pod("g-1", "g", run_seconds=1)
    seen: list[str] = []

    def finished() -> bool:
        phase = c.phase("g")
        if phase and (not seen or seen[-1] != phase):
            seen.append(phase)
        return phase == "Finished"

    wait_for(finished, 30, what="the group Finished", interval=0.01)
    # Pending once the pods exist is not written again: Scheduling, then Running, then Finished
    assert [p for p in seen if p != "Pending"] in (
        ["Scheduling", "Running", "Finished"],
        ["Running", "Finished"],  # Scheduling came and went between two looks
    )
    status = c.registry.get(("scheduling.x-k8s.io", "v1alpha1", "podgroups"), "default", "g")[
        "status"
    ]
    assert (status.get("succeeded"), "running" in status) == (2, False)


def test_a_gang_that_can_never_wait_backs_off_and_never_starves_the_others(cosched):
    # scheduleTimeoutSeconds 0: each member's wait at Permit would end as it begins. Permit
    # refuses it without waking its siblings, so the members back off like any unschedulable
    # pod instead of sending each other through Permit again ahead of every other gang.
    c = cosched(one_node("8"))
    c.podgroup("never", 3, scheduleTimeoutSeconds=0)
    members = [f"never-{i}" for i in range(3)]
    for name in members:
        c.pod(name, "never")

    def cycles() -> int:
        return sum(c.scheduler.attempts(f"default/{name}") for name in members)

    wait_for(lambda: cycles() >= 6, 10, what="the gang tried twice over")
    before = cycles()
    c.podgroup("fine", 2)  # created later: the queue sorts it after the stuck gang
    c.pod("fine-0", "fine")
    c.pod("fine-1", "fine")
    c.wait_bound("fine-0", "fine-1")
    # back-offs of 1, 2, 4... s: a handful of cycles each meanwhile, not thousands
    assert cycles() - before <= 3 * 4
    assert set(c.bound(*members).values()) == {None}
    assert "rejected due to timeout after waiting 0s at plugin Coscheduling." in " ".join(
        failures(c, *members)
    )
