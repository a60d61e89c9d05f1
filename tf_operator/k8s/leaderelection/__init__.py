"""Leader election (the counterpart of client-go `tools/leaderelection`).

    lock = resourcelock.EndpointsLock(kube_client, "default", "tf-operator", identity)
    elector = LeaderElector(lock, LeaderCallbacks(on_started_leading=run_controller,
                                                  on_stopped_leading=on_lost))
    elector.run(stop_event)   # blocks; is_leader() feeds the tf_operator_is_leader gauge

See `leaderelection` for the algorithm and `resourcelock` for the lock objects.
"""

from tf_operator.k8s.leaderelection import resourcelock
from tf_operator.k8s.leaderelection.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElector,
)
from tf_operator.k8s.leaderelection.resourcelock import (
    LEADER_ANNOTATION,
    LOCK_TYPES,
    UNKNOWN_LEADER,
    ConfigMapLock,
    EndpointsLock,
    LeaderElectionRecord,
    LeaseLock,
    Lock,
    MultiLock,
    ResourceLock,
    held_elsewhere,
    new_lock,
)

__all__ = [
    "held_elsewhere",
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "LEADER_ANNOTATION",
    "LOCK_TYPES",
    "UNKNOWN_LEADER",
    "ConfigMapLock",
    "EndpointsLock",
    "LeaderCallbacks",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "Lock",
    "MultiLock",
    "ResourceLock",
    "new_lock",
    "resourcelock",
]
