"""Operator side of issue 9: when a job's PodGroup cannot be scheduled, ``kubectl describe
tfjob`` says why. The operator copies the PodGroup's ``Unschedulable`` condition (status True)
into one Warning event on the TFJob, once per change of its message, never every sync
(divergence D40)."""

from __future__ import annotations

import time

import pytest

from .conftest import TFJOBS, events_about, gang_too_big_for_it, volcano_on_two_cpus, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def unschedulable_condition(client, name: str) -> dict | None:
    group = client.get(PODGROUPS, "default", name)
    for cond in (group.get("status") or {}).get("conditions") or []:
        if cond["type"] == "Unschedulable" and cond["status"] == "True":
            return cond
    return None


def test_unschedulable_podgroup_becomes_one_warning_event_on_the_tfjob(
    start_operator, control_plane
):
    with volcano_on_two_cpus(start_operator, control_plane) as cluster:
        registry = cluster.client
        registry.create(TFJOBS, "default", gang_too_big_for_it("too-big"))
        cond = wait_for(lambda: unschedulable_condition(registry, "too-big"), 30, what="condition")

        def surfaced() -> list[dict]:
            return [
                e
                for e in events_about(registry, "too-big", "TFJob")
                if e["type"] == "Warning" and cond["message"] in e["message"]
            ]

        wait_for(surfaced, 10, what="Warning event on the TFJob")
        settle = time.monotonic() + 2  # a few more scheduler cycles and operator syncs
        while time.monotonic() < settle:
            time.sleep(0.2)  # nothing to wait on: the point is that nothing more happens
        assert len(surfaced()) == 1
