"""Install what a flavour needs in the cluster: its PodGroup and Queue CRDs and the ``default``
Queue (weight 1; Volcano also ``reclaimable: true``), each only if absent.

The CRDs are this package's copies of upstream's (``crds/``); a test keeps the PodGroup and
kube-batch Queue CRDs identical to the ones under ``manifests/components/gang-*``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

import yaml

from localcluster.apimachinery.gvr import GVR
from localcluster.batchscheduler.flavours import DEFAULT_QUEUE, Flavour
from localcluster.client.api import ClusterClient
from localcluster.client.served import wait_until_served

if TYPE_CHECKING:
    from localcluster.batchscheduler.scheduler import BatchScheduler
    from localcluster.scheduler.ledger import NodeLedger

logger = logging.getLogger(__name__)

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


def crd(file_name: str) -> dict[str, Any]:
    text = resources.files("localcluster.batchscheduler").joinpath("crds", file_name).read_text()
    return cast(dict[str, Any], yaml.safe_load(text))


def default_queue(flavour: Flavour) -> dict[str, Any]:
    group, version, _ = flavour.queues
    spec: dict[str, Any] = {"weight": 1}
    if flavour.volcano:
        spec["reclaimable"] = True
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Queue",
        "metadata": {"name": DEFAULT_QUEUE},
        "spec": spec,
    }


def _create_if_absent(client: ClusterClient, gvr: GVR, obj: dict[str, Any]) -> None:
    try:
        client.create(gvr, None, obj)
        logger.info("created %s %s", obj["kind"], obj["metadata"]["name"])
    except Exception as err:  # noqa: BLE001 - AlreadyExists is fine (a test installed it)
        if getattr(err, "code", None) != 409:
            raise


def install(client: ClusterClient, flavour: Flavour) -> None:
    for file_name in (flavour.podgroup_crd, flavour.queue_crd):
        _create_if_absent(client, CRDS, crd(file_name))
    # a real kube-apiserver serves a new CRD a moment after creating it
    wait_until_served(client, flavour.queues)
    wait_until_served(client, flavour.podgroups)
    _create_if_absent(client, flavour.queues, default_queue(flavour))


def start_batch_schedulers(
    client: ClusterClient,
    ledger: NodeLedger,
    flavours: Iterable[str],
    confs: dict[str, Any] | None,
    schedule_period: float,
    stop_event: threading.Event,
) -> tuple[dict[str, BatchScheduler], list[threading.Thread]]:
    """Install and start one ``BatchScheduler`` per flavour name; returns them and their threads."""
    from localcluster.batchscheduler.scheduler import BatchScheduler

    schedulers: dict[str, BatchScheduler] = {}
    threads: list[threading.Thread] = []
    for name in flavours:
        scheduler = BatchScheduler(
            client,
            name,
            ledger=ledger,
            conf=(confs or {}).get(name),
            schedule_period=schedule_period,
        )
        install(client, scheduler.flavour)
        threads += scheduler.start(stop_event)
        schedulers[name] = scheduler
    return schedulers, threads
