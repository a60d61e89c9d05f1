"""Wait until the API serves a resource: a new CRD is served a moment after it is created.

The emulator serves a CRD the moment it stores it; kube-apiserver's apiextensions controllers
establish it a little later, and until then its resources answer 404. An agent that installs a
CRD and then writes its objects (kube-batch's default Queue) waits here in between.
"""

from __future__ import annotations

import time

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import ClusterClient

# How often discovery is asked again while the resource is not served yet.
POLL_SECONDS = 0.1


def wait_until_served(client: ClusterClient, gvr: GVR, timeout: float = 30.0) -> None:
    """Return once ``gvr`` is served; the last 404 after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.resource_info(gvr)
            return
        except StatusError as err:
            if err.code != 404 or time.monotonic() >= deadline:
                raise
        time.sleep(POLL_SECONDS)
