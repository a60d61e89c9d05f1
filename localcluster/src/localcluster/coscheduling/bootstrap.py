"""Install and start scheduler-plugins in a local cluster: its PodGroup CRD (if absent), the
coscheduling scheduler under its own name and the PodGroup controller, as scheduler-plugins'
chart installs them beside the default scheduler."""

from __future__ import annotations

import logging
import threading
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

from localcluster.coscheduling.controller import PodGroupController
from localcluster.coscheduling.plugin import CoschedulingArgs
from localcluster.coscheduling.scheduler import CoschedulingScheduler
from localcluster.scheduler.ledger import NodeLedger

if TYPE_CHECKING:
    from localcluster.client.api import ClusterClient
from localcluster.client.served import wait_until_served
from localcluster.coscheduling.podgroup import PODGROUPS

logger = logging.getLogger(__name__)

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
CRD_FILE = "scheduler-plugins-podgroup-crd.yaml"


def crd() -> dict[str, Any]:
    text = resources.files("localcluster.coscheduling").joinpath("crds", CRD_FILE).read_text()
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def install(client: ClusterClient) -> None:
    """Create the PodGroup CRD unless it exists (a test or kubectl may have applied it)."""
    try:
        client.create(CRDS, None, crd())
        logger.info("created CustomResourceDefinition podgroups.scheduling.x-k8s.io")
    except Exception as err:  # noqa: BLE001 - AlreadyExists is fine
        if getattr(err, "code", None) != 409:
            raise
    # a real kube-apiserver serves a new CRD a moment after creating it; the informers would
    # otherwise find it missing and look again only seconds later
    wait_until_served(client, PODGROUPS)


def start_scheduler_plugins(
    client: ClusterClient,
    ledger: NodeLedger,
    args: CoschedulingArgs,
    stop_event: threading.Event,
) -> tuple[CoschedulingScheduler, PodGroupController, list[threading.Thread]]:
    install(client)
    scheduler = CoschedulingScheduler(client, ledger=ledger, args=args)
    controller = PodGroupController(client)
    threads = scheduler.start(stop_event) + controller.start(stop_event)
    return scheduler, controller, threads
