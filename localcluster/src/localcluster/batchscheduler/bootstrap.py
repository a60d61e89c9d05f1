"""Install what a flavour needs in the cluster: its PodGroup and Queue CRDs and the ``default``
Queue (weight 1; Volcano also ``reclaimable: true``), each only if absent.

The CRDs are this package's copies of upstream's (``crds/``); a test keeps the PodGroup and
kube-batch Queue CRDs identical to the ones under ``manifests/components/gang-*``.
"""

from __future__ import annotations

import logging
from importlib import resources

import yaml

from localcluster.batchscheduler.flavours import DEFAULT_QUEUE, Flavour

logger = logging.getLogger(__name__)

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


def crd(file_name: str) -> dict:
    text = resources.files("localcluster.batchscheduler").joinpath("crds", file_name).read_text()
    return yaml.safe_load(text)


def default_queue(flavour: Flavour) -> dict:
    group, version, _ = flavour.queues
    spec: dict = {"weight": 1}
    if flavour.volcano:
        spec["reclaimable"] = True
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Queue",
        "metadata": {"name": DEFAULT_QUEUE},
        "spec": spec,
    }


def _create_if_absent(registry, gvr, obj: dict) -> None:
    try:
        registry.create(gvr, None, obj)
        logger.info("created %s %s", obj["kind"], obj["metadata"]["name"])
    except Exception as err:  # noqa: BLE001 - AlreadyExists is fine (a test installed it)
        if getattr(err, "code", None) != 409:
            raise


def install(registry, flavour: Flavour) -> None:
    for file_name in (flavour.podgroup_crd, flavour.queue_crd):
        _create_if_absent(registry, CRDS, crd(file_name))
    _create_if_absent(registry, flavour.queues, default_queue(flavour))


def start_batch_schedulers(
    registry,
    ledger,
    flavours,
    confs: dict | None,
    schedule_period: float,
    stop_event,
) -> tuple[dict, list]:
    """Install and start one ``BatchScheduler`` per flavour name; returns them and their threads."""
    from localcluster.batchscheduler.scheduler import BatchScheduler

    schedulers, threads = {}, []
    for name in flavours:
        scheduler = BatchScheduler(
            registry,
            name,
            ledger=ledger,
            conf=(confs or {}).get(name),
            schedule_period=schedule_period,
        )
        install(registry, scheduler.flavour)
        threads += scheduler.start(stop_event)
        schedulers[name] = scheduler
    return schedulers, threads
