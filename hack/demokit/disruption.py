"""``make demo ARGS=--disruption``: a worker is evicted under the running job, as draining its
node does, and the job restarts it and succeeds without spending its budget.

The example job gets a lifecycle failure policy (``failure: {}``: disruptions are recreated
without counting) and ``backoffLimit: 0`` (any counted restart would fail it). Once worker 1
runs, this does what the eviction API does to each pod of a drained node: it marks the pod with
a ``DisruptionTarget`` condition (reason ``EvictionByEvictionAPI``), then deletes it. The local
cluster has no eviction API of its own, so the demo plays that part; the operator sees only
what a real drain leaves. docs/policies.md, D102.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tf_operator.k8s.client import PODS

EVICTED_REPLICA = ("worker", 1)
# How long the demo waits for the worker to run before giving up on evicting it.
EVICT_WAIT_SECONDS = 60.0


def with_disruption_policy(job: dict[str, Any]) -> dict[str, Any]:
    """The job with the failure policy that leaves disruptions out of the budget, and a
    budget of zero."""
    spec = job.setdefault("spec", {})
    spec["backoffLimit"] = 0
    spec["lifecyclePolicy"] = {"failure": {}}
    return job


def evict(kube: Any, pod: dict[str, Any]) -> None:
    """What the eviction API does to a pod it evicts: DisruptionTarget, then the deletion."""
    pods = kube.resource(PODS)
    namespace = pod["metadata"]["namespace"]
    pod["status"]["conditions"] = [
        *(pod["status"].get("conditions") or []),
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting (the demo drains the worker's node)",
        },
    ]
    pods.update_status(pod, namespace=namespace)
    pods.delete(pod["metadata"]["name"], namespace=namespace)


def evict_when_running(client: Any, job: dict[str, Any], done: threading.Event) -> threading.Thread:
    """Evict worker 1 once it runs (in a thread); ``done`` is set once it was evicted."""
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    rtype, index = EVICTED_REPLICA

    def run() -> None:
        deadline = time.monotonic() + EVICT_WAIT_SECONDS
        pause = threading.Event()
        while time.monotonic() < deadline:
            pods = client.get_pods(name, namespace, rtype, index)
            running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
            if running:
                pod = running[0]
                print(f"draining the node of {pod['metadata']['name']}: evicting it")
                evict(client.kube, pod)
                done.set()
                return
            pause.wait(0.2)

    thread = threading.Thread(target=run, name="evict-worker", daemon=True)
    thread.start()
    return thread


def budget_report(final: dict[str, Any]) -> tuple[str, bool]:
    """What the final status says of the budget, and whether it was left unspent."""
    from tf_operator.sdk.lifecycle import restart_budget, restarts_by_cause

    used, limit = restart_budget(final)
    causes = restarts_by_cause(final)
    text = (
        f"restarts counted against backoffLimit: {used} of {limit}; "
        f"by cause: {', '.join(f'{k}={v}' for k, v in sorted(causes.items())) or 'none recorded'}"
    )
    return text, used == 0
