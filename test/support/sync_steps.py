"""Steps of the per-kind controller tests over :class:`support.jobkinds.JobHarness`: deliver
what a pass created to the informers (some pods moved on to a phase), then sync again."""

from __future__ import annotations

from support.jobkinds import JobHarness
from tf_operator.k8s.client import PODS, SERVICES


def env_of(pod: dict, container: int = 0) -> dict[str, str]:
    """A container's literal variables by name (``valueFrom`` ones left out)."""
    return {
        e["name"]: e["value"] for e in pod["spec"]["containers"][container]["env"] if "value" in e
    }


def observe(harness: JobHarness, phases: dict[str, str] | None = None) -> None:
    """The informers deliver what the pass created, the pods in ``phases`` (by name) moved on."""
    for pod in harness.client.resource(PODS).list(namespace="default")["items"]:
        phase = (phases or {}).get(pod["metadata"]["name"])
        if phase is not None:
            pod["status"] = {"phase": phase}
            pod = harness.client.resource(PODS).update_status(pod)
        harness.pod_informer.get_indexer().update(pod)
        harness.ctr.pods.on_add(pod)
    for service in harness.client.resource(SERVICES).list(namespace="default")["items"]:
        harness.service_informer.get_indexer().update(service)
        harness.ctr.services.on_add(service)


def resync(harness: JobHarness, job: dict, phases: dict[str, str] | None = None) -> None:
    observe(harness, phases)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)


def pods(harness: JobHarness) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in harness.client.resource(PODS).list()["items"]}


def services(harness: JobHarness) -> dict[str, dict]:
    return {s["metadata"]["name"]: s for s in harness.client.resource(SERVICES).list()["items"]}


def set_suspend(harness: JobHarness, job: dict, suspend: bool) -> None:
    """Write ``runPolicy.suspend`` to the stored job and cache it."""
    stored = harness.stored_job(job)
    stored["spec"]["runPolicy"] = {**(stored["spec"].get("runPolicy") or {}), "suspend": suspend}
    harness.cache_job(
        harness.client.resource(harness.case.resource).update(stored, namespace="default")
    )


def forget_deleted(harness: JobHarness, job: dict, names: list[str]) -> None:
    """The informers observed the deletion of these pods and services."""
    for name in names:
        for informer in (harness.pod_informer, harness.service_informer):
            cached = informer.get_indexer().get_by_key(f"default/{name}")
            if cached is not None:
                informer.get_indexer().delete(cached)
    harness.ctr.expectations.delete_expectations_with_prefix(f"default/{job['metadata']['name']}/")
