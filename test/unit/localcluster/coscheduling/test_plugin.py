"""The Coscheduling plugin's extension points: the facts of scheduler-plugins v0.28.9
``coscheduling_test.go`` (``TestLess``, ``TestPermit``, ``TestPostFilter``,
``TestPodGroupBackoffTime``) and its arguments."""

from __future__ import annotations

import pytest

from localcluster.apimachinery.objects import format_time
from localcluster.coscheduling.manager import PodGroupManager
from localcluster.coscheduling.plugin import Code, Coscheduling, CoschedulingArgs
from support.coscheduling import FakeView, pod, podgroup

LOW, HIGH = 10, 100
NOW = 1_700_000_000.0


class FakeFramework:
    """Waiting pods by key -> group, and what the plugin did to them."""

    def __init__(self, waiting: dict[str, str] | None = None) -> None:
        self.waiting = dict(waiting or {})
        self.allowed: list[str] = []
        self.rejected: list[tuple[str, str]] = []
        self.activated: list[tuple[str, str]] = []

    def waiting_in_group(self, group: str) -> list[str]:
        return sorted(k for k, g in self.waiting.items() if g == group)

    def allow(self, pod_key: str) -> None:
        self.allowed.append(pod_key)
        del self.waiting[pod_key]

    def reject(self, pod_key: str, message: str) -> None:
        self.rejected.append((pod_key, message))
        del self.waiting[pod_key]

    def activate_group(self, group: str, but: str) -> None:
        self.activated.append((group, but))


def plugin(view: FakeView, framework: FakeFramework | None = None, **args) -> Coscheduling:
    arguments = CoschedulingArgs(**args)
    manager = PodGroupManager(view, schedule_timeout=arguments.permit_waiting_time_seconds)
    return Coscheduling(manager, framework or FakeFramework(), arguments)


def prio(body: dict, value: int) -> dict:
    body["spec"]["priority"] = value
    return body


def created(name: str, namespace: str, seconds: int) -> dict:
    group = podgroup(name, 0, namespace=namespace)
    group["metadata"]["creationTimestamp"] = format_time(NOW + seconds)
    return group


# (name, p1, p1 queued at +s, p2, p2 queued at +s, podgroups, p1 goes first)
LESS = [
    ("p1.priority less than p2.priority", prio(pod("p1", namespace="ns1"), LOW), 0, prio(pod("p2", namespace="ns2"), HIGH), 0, [], False),
    ("p1.priority greater than p2.priority", prio(pod("p1", namespace="ns1"), HIGH), 0, prio(pod("p2", namespace="ns2"), LOW), 0, [], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2", prio(pod("p1", namespace="ns1"), HIGH), 1, prio(pod("p2", namespace="ns2"), HIGH), 2, [], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1", prio(pod("p1", namespace="ns1"), HIGH), 2, prio(pod("p2", namespace="ns2"), HIGH), 1, [], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1", prio(pod("p1", "pg1", "ns1"), LOW), 0, prio(pod("p2", namespace="ns2"), HIGH), 0, [created("pg1", "ns1", 0)], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1", prio(pod("p1", "pg1", "ns1"), HIGH), 0, prio(pod("p2", namespace="ns2"), LOW), 0, [created("pg1", "ns1", 0)], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1", prio(pod("p1", "pg1", "ns1"), HIGH), 1, prio(pod("p2", namespace="ns2"), HIGH), 2, [created("pg1", "ns1", 1)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1", prio(pod("p1", "pg1", "ns1"), HIGH), 2, prio(pod("p2", namespace="ns2"), HIGH), 1, [created("pg1", "ns1", 2)], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2", prio(pod("p1", "pg1", "ns1"), LOW), 0, prio(pod("p2", "pg2", "ns2"), HIGH), 0, [created("pg1", "ns1", 1), created("pg2", "ns2", 2)], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2", prio(pod("p1", "pg1", "ns1"), HIGH), 0, prio(pod("p2", "pg1", "ns2"), LOW), 0, [created("pg1", "ns1", 1), created("pg2", "ns2", 2)], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2", prio(pod("p1", "pg1", "ns1"), HIGH), 1, prio(pod("p2", "pg2", "ns2"), HIGH), 2, [created("pg1", "ns1", 1), created("pg2", "ns2", 2)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1", prio(pod("p1", "pg2", "ns"), LOW), 1, prio(pod("p2", "pg1", "ns"), HIGH), 2, [created("pg1", "ns", 1), created("pg2", "ns", 2)], False),
    ("equal priority and creation time, p1 belongs pg1 and p2 belong to pg2", prio(pod("p1", "pg2", "ns1"), HIGH), 1, prio(pod("p2", "pg2", "ns2"), HIGH), 1, [created("pg1", "ns1", 1), created("pg2", "ns2", 2)], True),
    ("equal priority and creation time, and p2 belong to pg2", prio(pod("p1", namespace="ns1"), HIGH), 1, prio(pod("p2", "pg2", "ns2"), HIGH), 1, [created("pg2", "ns2", 2)], True),
]  # fmt: skip


@pytest.mark.parametrize(("case", "p1", "t1", "p2", "t2", "groups", "first"), LESS)
def test_less(case, p1, t1, p2, t2, groups, first):
    pl = plugin(FakeView(groups))
    assert (pl.sort_key(p1, NOW + t1) < pl.sort_key(p2, NOW + t2)) is first, case


@pytest.mark.parametrize(
    ("case", "the_pod", "code"),
    [
        ("pods do not belong to any podGroup", pod("p"), Code.SUCCESS),
        ("pods belong to a pg1, but quorum not satisfied", pod("p", "pg2"), Code.WAIT),
        ("pods belong to a podGroup, and quorum satisfied", pod("p", "pg1"), Code.SUCCESS),
    ],
)
def test_permit(case, the_pod, code):
    pl = plugin(FakeView([podgroup("pg1", 1), podgroup("pg2", 2)]))
    assert pl.permit(the_pod, "ns/p").code == code, case


def test_permit_waits_the_groups_timeout_else_the_plugins():
    view = FakeView([podgroup("pg1", 2, scheduleTimeoutSeconds=3), podgroup("pg2", 2)])
    pl = plugin(view, permit_waiting_time_seconds=7)
    by_default = plugin(view)
    assert pl.permit(pod("p", "pg1"), "ns/p").wait_seconds == 3
    assert pl.permit(pod("p", "pg2"), "ns/p").wait_seconds == 7
    assert by_default.permit(pod("p", "pg2"), "ns/p").wait_seconds == 10


def test_permit_success_lets_every_waiting_member_go():
    framework = FakeFramework({"ns/a": "ns/pg1", "ns/b": "ns/pg1", "ns/x": "ns/other"})
    view = FakeView(
        [podgroup("pg1", 3)], assigned=[pod("a", "pg1", node="n"), pod("b", "pg1", node="n")]
    )
    result = plugin(view, framework).permit(pod("c", "pg1"), "ns/c")
    assert result.code == Code.SUCCESS
    assert framework.allowed == ["ns/a", "ns/b"]
    assert framework.waiting == {"ns/x": "ns/other"}


def test_a_pod_whose_podgroup_is_missing_is_refused_at_permit():
    result = plugin(FakeView()).permit(pod("p", "gone"), "ns/p")
    assert (result.code, result.message) == (Code.UNSCHEDULABLE, "PodGroup not found")


@pytest.mark.parametrize(
    ("case", "the_pod", "assigned", "min_member", "message"),
    [
        ("pod does not belong to any pod group", pod("p"), [], 2, "can not find pod group"),
        (
            "enough pods assigned, do not reject all",
            pod("p", "pg1"),
            [pod("p1", "pg1", node="node")],
            1,
            "",
        ),
        (
            "pod failed at filter phase, reject all pods",
            pod("p", "pg1"),
            [pod("p1", "pg1", node="node")],
            2,
            "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
        ),
    ],
)
def test_post_filter(case, the_pod, assigned, min_member, message):
    framework = FakeFramework({"ns/p1": "ns/pg1"})
    pl = plugin(FakeView([podgroup("pg1", min_member)], assigned=assigned), framework)
    assert pl.post_filter(the_pod) == message, case
    rejected = (
        [("ns/p1", "optimistic rejection in PostFilter")] if message.startswith("PodGroup") else []
    )
    assert framework.rejected == rejected


def test_post_filter_keeps_the_waiting_members_when_the_gap_is_at_most_ten_percent():
    framework = FakeFramework({f"ns/p{i}": "ns/pg1" for i in range(9)})
    assigned = [pod(f"p{i}", "pg1", node="n") for i in range(9)]
    pl = plugin(FakeView([podgroup("pg1", 10)], assigned=assigned), framework)
    assert pl.post_filter(pod("p9", "pg1")) == ""
    assert framework.rejected == [] and len(framework.waiting) == 9


def test_pod_group_backoff_time():
    """TestPodGroupBackoffTime: the first member waits and activates its siblings; a failed
    member backs the group off, and PreFilter refuses the group while it lasts."""
    pods = [pod(f"pod{i}", "pg1") for i in (1, 2, 3)]
    framework = FakeFramework()
    pl = plugin(FakeView([podgroup("pg1", 3)], listed=pods), framework, pod_group_backoff_seconds=1)
    assert pl.permit(pods[0], "ns/pod1").code == Code.WAIT
    assert framework.activated == [("ns/pg1", "ns/pod1")]
    pl.post_filter(pods[1])
    assert pl.pre_filter(pods[2]) == "podGroup ns/pg1 failed recently"


def test_no_backoff_without_the_argument_or_without_min_member_pods():
    pods = [pod(f"pod{i}", "pg1") for i in (1, 2)]
    pl = plugin(FakeView([podgroup("pg1", 2)], listed=pods))
    pl.post_filter(pods[0])
    assert pl.pre_filter(pods[1]) is None
    pl = plugin(FakeView([podgroup("pg1", 3)], listed=pods), pod_group_backoff_seconds=1)
    pl.post_filter(pods[0])  # two pods of three: not backed off, refused for its size alone
    assert pl.pre_filter(pods[1]).startswith("pre-filter pod pod2 cannot find enough sibling pods")


def test_unreserve_rejects_the_waiting_siblings():
    framework = FakeFramework({"ns/a": "ns/pg1", "ns/x": "ns/other"})
    plugin(FakeView([podgroup("pg1", 3)]), framework).unreserve(pod("b", "pg1"))
    assert framework.rejected == [("ns/a", "rejection in Unreserve")]


def test_arguments():
    assert CoschedulingArgs.parse(None) == CoschedulingArgs(10, 0)
    parsed = CoschedulingArgs.parse({"permitWaitingTimeSeconds": "3", "podGroupBackoffSeconds": 1})
    assert parsed == CoschedulingArgs(3, 1)
    with pytest.raises(ValueError, match="cannot be negative"):
        CoschedulingArgs.parse({"podGroupBackoffSeconds": -1})
    with pytest.raises(ValueError, match="unknown Coscheduling arguments: permitWaitingTime"):
        CoschedulingArgs.parse({"permitWaitingTime": 3})
