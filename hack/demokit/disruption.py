"""``make demo ARGS=--disruption``: the node a worker runs on is drained under the running job,
and the job restarts the worker elsewhere and succeeds without spending its budget.

The cluster has a node for the parameter server and the chief (pool ``core``) and two worker
nodes (pool ``workers``): draining a node evicts every pod on it, and the example's PS keeps
the model in memory, so it is kept off the nodes a worker may be drained from. The example job
gets a lifecycle failure policy (``failure: {}``: disruptions are recreated without counting),
``backoffLimit: 0`` (any counted restart would fail it) and node selectors for the two pools.
Once worker 1 runs, its node is drained as ``kubectl drain --ignore-daemonsets
--delete-emptydir-data`` drains it, through the official Kubernetes Python client: the node is
cordoned (``spec.unschedulable``), then each of its pods is evicted through the eviction API
(``pods/eviction``: ``DisruptionTarget``, then a graceful deletion) and waited for. The
operator recreates the evicted worker on the other worker node. docs/policies.md, D102.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

POOL_LABEL = "tf-operator.demo/pool"
# The cluster of the variant: one node for the PS and the chief, two for the workers.
CLUSTER_ARGS = (
    f"--node-pool=name=core,count=1,labels={POOL_LABEL}=core",
    f"--node-pool=name=workers,count=2,labels={POOL_LABEL}=workers",
)
POOL_OF_REPLICA = {"PS": "core", "Chief": "core", "Master": "core", "Worker": "workers"}
DRAINED_REPLICA = ("worker", 1)
# How long the demo waits for the worker to run before giving up on draining its node.
DRAIN_WAIT_SECONDS = 60.0
# How long each evicted pod may take to go, and the pause after a refused eviction (kubectl's).
EVICTED_WAIT_SECONDS = 60.0
EVICTION_RETRY_SECONDS = 5.0


def with_disruption_policy(job: dict[str, Any]) -> dict[str, Any]:
    """The job with the failure policy that leaves disruptions out of the budget, a budget of
    zero, and each replica type on its pool's nodes."""
    spec = job.setdefault("spec", {})
    spec["backoffLimit"] = 0
    spec["lifecyclePolicy"] = {"failure": {}}
    for rtype, replica in (spec.get("tfReplicaSpecs") or {}).items():
        pool = POOL_OF_REPLICA.get(rtype, "workers")
        pod_spec = replica.setdefault("template", {}).setdefault("spec", {})
        pod_spec.setdefault("nodeSelector", {})[POOL_LABEL] = pool
    return job


def _api_client(kubeconfig: str) -> Any:
    from kubernetes import config as k8s_config

    return k8s_config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]  # the client leaves it unannotated


def _drained_by_kubectl(pod: Any) -> bool:
    """What ``kubectl drain --ignore-daemonsets`` evicts: not a DaemonSet's pod, not a mirror
    pod, not one that is going already."""
    meta = pod.metadata
    if meta.deletion_timestamp is not None:
        return False
    if "kubernetes.io/config.mirror" in (meta.annotations or {}):
        return False
    return not any(
        ref.controller and ref.kind == "DaemonSet" for ref in meta.owner_references or []
    )


def drain(kubeconfig: str, node: str, out: Callable[[str], None]) -> list[str]:
    """Cordon ``node``, evict its pods through the eviction API and wait until they are gone,
    as ``kubectl drain`` does; returns the evicted pods as ``namespace/name``."""
    from kubernetes import client as k8s

    with _api_client(kubeconfig) as api:
        return _drain(k8s.CoreV1Api(api), node, out)


def _drain(core: Any, node: str, out: Callable[[str], None]) -> list[str]:
    from kubernetes import client as k8s
    from kubernetes.client.exceptions import ApiException

    core.patch_node(node, {"spec": {"unschedulable": True}})
    out(f"node/{node} cordoned")
    pods = [
        p
        for p in core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}").items
        if _drained_by_kubectl(p)
    ]
    pause = threading.Event()
    for pod in pods:
        name, namespace = pod.metadata.name, pod.metadata.namespace
        out(f"evicting pod {namespace}/{name}")
        eviction = k8s.V1Eviction(metadata=k8s.V1ObjectMeta(name=name, namespace=namespace))
        while True:
            try:
                core.create_namespaced_pod_eviction(name, namespace, eviction)
                break
            except ApiException as err:
                if err.status == 404:
                    break
                if err.status != 429:
                    raise
                # a disruption budget says not now: try again, as kubectl does
                out(f"error when evicting pods/{name} -n {namespace} (will retry): {err.reason}")
                pause.wait(EVICTION_RETRY_SECONDS)
    for pod in pods:
        _wait_gone(core, pod, pause)
        out(f"pod/{pod.metadata.name} evicted")
    out(f"node/{node} drained")
    return [f"{p.metadata.namespace}/{p.metadata.name}" for p in pods]


def _wait_gone(core: Any, pod: Any, pause: threading.Event) -> None:
    """Until the pod is deleted (a pod of the same name with another uid is a new one)."""
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + EVICTED_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            current = core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace)
        except ApiException as err:
            if err.status == 404:
                return
            raise
        if current.metadata.uid != pod.metadata.uid:
            return
        pause.wait(0.2)
    raise TimeoutError(f"pod {pod.metadata.name} still there {EVICTED_WAIT_SECONDS:.0f}s later")


def drain_when_running(
    kubeconfig: str, client: Any, job: dict[str, Any], done: threading.Event
) -> threading.Thread:
    """Drain worker 1's node once it runs (in a thread); ``done`` is set once the node is
    drained and worker 1 runs again on another node."""
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    rtype, index = DRAINED_REPLICA

    def running() -> dict[str, Any] | None:
        pods = client.get_pods(name, namespace, rtype, index)
        live = [
            p
            for p in pods
            if (p.get("status") or {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
        ]
        return live[0] if live else None

    def run() -> None:
        pause = threading.Event()
        deadline = time.monotonic() + DRAIN_WAIT_SECONDS
        pod = None
        while pod is None and time.monotonic() < deadline:
            pod = running()
            if pod is None:
                pause.wait(0.2)
        if pod is None:
            print(f"{name}-{rtype}-{index} never ran: nothing drained")
            return
        node, uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
        print(
            f"draining node {node}, where {pod['metadata']['name']} runs "
            f"(kubectl drain {node} --ignore-daemonsets --delete-emptydir-data):"
        )
        try:
            drain(kubeconfig, node, lambda line: print(f"  {line}"))
        except Exception as err:  # noqa: BLE001 - reported; the demo then fails its check
            print(f"  draining {node} failed: {err}")
            return
        deadline = time.monotonic() + EVICTED_WAIT_SECONDS
        while time.monotonic() < deadline:
            again = running()
            if again is not None and again["metadata"]["uid"] != uid:
                print(
                    f"{again['metadata']['name']} recreated by the operator, running on node "
                    f"{again['spec']['nodeName']}"
                )
                done.set()
                return
            pause.wait(0.2)
        print(f"{name}-{rtype}-{index} did not run again after the drain")

    thread = threading.Thread(target=run, name="drain-node", daemon=True)
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
