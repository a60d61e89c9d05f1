"""What differs between the two batch schedulers the local cluster can play.

Everything flavour-specific is a field here; the rest of the package branches only on
``Flavour.volcano`` where upstream's wording or phases differ.
"""

from __future__ import annotations

from dataclasses import dataclass

GVR = tuple[str, str, str]

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
PREEMPTABLE_ANNOTATION = "volcano.sh/preemptable"
PRIORITY_CLASSES: GVR = ("scheduling.k8s.io", "v1", "priorityclasses")
DEFAULT_QUEUE = "default"

KUBE_BATCH_CONF = """
actions: "allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""

VOLCANO_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


@dataclass(frozen=True)
class Flavour:
    name: str  # the schedulerName it serves and its events' source component
    volcano: bool
    podgroups: GVR
    queues: GVR
    podgroup_crd: str  # file name under batchscheduler/crds/
    queue_crd: str
    actions: frozenset[str]
    pod_event_reason: str  # Warning event on a pod that cannot be scheduled
    default_conf: str
    default_error_cache: str


KUBE_BATCH = Flavour(
    name="kube-batch",
    volcano=False,
    podgroups=("scheduling.incubator.k8s.io", "v1alpha1", "podgroups"),
    queues=("scheduling.incubator.k8s.io", "v1alpha1", "queues"),
    podgroup_crd="kube-batch-podgroup-crd.yaml",
    queue_crd="kube-batch-queue-crd.yaml",
    actions=frozenset({"allocate", "backfill", "reclaim", "preempt"}),
    pod_event_reason="Unschedulable",
    default_conf=KUBE_BATCH_CONF,
    default_error_cache="off",
)

VOLCANO = Flavour(
    name="volcano",
    volcano=True,
    podgroups=("scheduling.volcano.sh", "v1beta1", "podgroups"),
    queues=("scheduling.volcano.sh", "v1beta1", "queues"),
    podgroup_crd="volcano-podgroup-crd.yaml",
    queue_crd="volcano-queue-crd.yaml",
    actions=frozenset({"enqueue", "allocate", "backfill", "reclaim", "preempt"}),
    pod_event_reason="FailedScheduling",
    default_conf=VOLCANO_CONF,
    default_error_cache="task-spec-nonempty",
)

FLAVOURS: dict[str, Flavour] = {f.name: f for f in (KUBE_BATCH, VOLCANO)}
