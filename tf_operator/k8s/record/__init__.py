"""Event recording (the counterpart of client-go `tools/record`).

    broadcaster = EventBroadcaster(kube_client)        # logs + writes to the API
    recorder = broadcaster.new_recorder("tf-operator")
    recorder.eventf(tfjob, "Normal", "SuccessfulCreatePod", "Created pod: %s", name)
    broadcaster.shutdown()

Recording never blocks the caller; see `event` for the delivery rules and
`events_cache` for aggregation and de-duplication.
"""

from tf_operator.k8s.record.event import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    EventBroadcaster,
    EventRecorder,
    EventSink,
    EventWatcher,
    KubeEventSink,
    object_reference,
)
from tf_operator.k8s.record.events_cache import EventCorrelator

__all__ = [
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EventBroadcaster",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "EventWatcher",
    "KubeEventSink",
    "object_reference",
]
