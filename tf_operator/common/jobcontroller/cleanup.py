"""Clean-up of a finished job: its pods and services, and its deletion after the TTL.

Pods go by the run policy's ``cleanPodPolicy`` (default ``Running``, or ``None`` with v1.9's
defaults, D56), but a limit failure (deadline, backoff) deletes every active pod (D16); services
go with their pods, and all of them with ``All`` (D17). A suspended job loses every pod and
service whatever the policy (training-operator v1.9, D61).
With ``ttlSecondsAfterFinished`` the job is deleted once the TTL passed since completion, else
re-examined exactly then (D13, D14). ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic

from tf_operator.apis.common.v1.types import CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_RUNNING
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import J
from tf_operator.common.jobcontroller.limits import seconds_left
from tf_operator.common.jobcontroller.owned import OwnedObjects
from tf_operator.common.jobcontroller.pod import phase_of
from tf_operator.k8s.client import ResourceInterface, is_not_found
from tf_operator.k8s.clock import Clock
from tf_operator.k8s.objects import Obj, meta
from tf_operator.k8s.workqueue import DelayingQueue


def _is_active(pod: Obj) -> bool:
    return phase_of(pod) not in ("Succeeded", "Failed") and not meta(pod).get("deletionTimestamp")


class CleanupReconciler(Generic[J]):
    """Deletes a finished job's pods and services, and the job after its TTL."""

    def __init__(
        self,
        kind_name: str,
        pods: OwnedObjects[J],
        services: OwnedObjects[J],
        jobs: ResourceInterface,
        queue: DelayingQueue,
        clock: Clock,
    ) -> None:
        self._kind_name = kind_name
        self._pods = pods
        self._services = services
        self._jobs = jobs
        self._queue = queue
        self._clock = clock

    def delete_pods_and_services(self, ctx: SyncContext[J], kill_active: bool) -> None:
        """A finished job's, by its clean pod policy."""
        policy = ctx.job.run_policy.clean_pod_policy
        self._delete(
            ctx,
            lambda pod: (
                policy == CLEAN_POD_POLICY_ALL
                or (policy == CLEAN_POD_POLICY_RUNNING and phase_of(pod) == "Running")
                or (kill_active and _is_active(pod))
            ),
            every_service=policy == CLEAN_POD_POLICY_ALL,
        )

    def delete_everything(self, ctx: SyncContext[J]) -> None:
        """A suspended job's: every pod and service whatever the clean pod policy (v1.9)."""
        self._delete(ctx, lambda pod: True, every_service=True)

    def _delete(
        self, ctx: SyncContext[J], doomed: Callable[[Obj], bool], every_service: bool
    ) -> None:
        """Delete the doomed pods, and their services (every service with ``every_service``)."""
        job = ctx.job
        deleted_names: set[str] = set()
        for pod in ctx.pods:
            if doomed(pod):
                self._pods.delete(job, pod)
                deleted_names.add(meta(pod).get("name", ""))
        for service in ctx.services:
            if every_service or meta(service).get("name", "") in deleted_names:
                self._services.delete(job, service)

    def expire(self, ctx: SyncContext[J]) -> bool:
        """Apply ``ttlSecondsAfterFinished``; True when the job was deleted."""
        job = ctx.job
        ttl = job.run_policy.ttl_seconds_after_finished
        if ttl is None:
            return False
        completion = job.status.completion_time or ctx.now
        remaining = seconds_left(ttl, completion, self._clock.now())
        if remaining > 0:
            self._queue.add_after(ctx.key, remaining)
            return False
        try:
            self._jobs.delete(job.name, namespace=job.namespace)
        except Exception as err:
            if is_not_found(err):
                return True
            ctx.logger.warning("Cleanup %s error: %s.", self._kind_name, err)
            raise
        return True
