"""A PodGroup deleted under a waiting gang is made again at once, not at the job's resync
(issue 27, Low): its deletion queues its job."""

from __future__ import annotations

import time

import pytest

from .conftest import TFJOBS, gang_too_big_for_it, volcano_on_two_cpus, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def test_a_deleted_pod_group_comes_back_before_the_resync(start_operator, control_plane):
    with volcano_on_two_cpus(start_operator, control_plane) as cluster:
        registry = cluster.client
        registry.create(TFJOBS, "default", gang_too_big_for_it("waiting"))  # never placed
        first = wait_for(lambda: registry.get(PODGROUPS, "default", "waiting"), 30, what="group")
        registry.delete(PODGROUPS, "default", "waiting")
        deleted = time.monotonic()

        def again() -> dict | None:
            items = registry.list(PODGROUPS, "default").items
            return next(
                (g for g in items if g["metadata"]["uid"] != first["metadata"]["uid"]), None
            )

        wait_for(again, 10, what="the PodGroup made again")  # the job's resync is 30 s
        print(f"PodGroup back {time.monotonic() - deleted:.2f}s after its deletion")
