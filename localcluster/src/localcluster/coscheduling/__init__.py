"""scheduler-plugins' coscheduling for the local cluster (v0.28.9, the version
training-operator v1.9 builds against).

``CoschedulingScheduler`` is a kube-scheduler profile named ``scheduler-plugins-scheduler``
(the name scheduler-plugins' chart gives it) running the ``Coscheduling`` plugin: pods whose
``schedulerName`` names it and whose ``scheduling.x-k8s.io/pod-group`` label names a PodGroup
(``scheduling.x-k8s.io/v1alpha1``) are held at Permit, assumed on their nodes, until
``minMember`` of the group are, then bound together; a group that cannot complete within its
``scheduleTimeoutSeconds`` is rejected and its pods back off. ``PodGroupController`` writes the
groups' phases (Pending, Scheduling, Running, Finished, Failed) and counts. Both run beside
the default scheduler and the batch schedulers, on the one ``NodeLedger``:
``LocalCluster(scheduler_plugins=True)`` or ``tf-operator-localcluster --scheduler-plugins``.

Layers, each importing only those before it: ``podgroup`` -> ``manager`` -> ``plugin`` ->
``queue`` -> ``scheduler``/``controller`` -> ``bootstrap``.

Deliberate differences from upstream (behaviour a user could observe):

1. A pod that failed is moved back by any pod added or gone, node change or PodGroup change,
   and retried at the latest 5 s after it failed (the local default scheduler's period);
   kube-scheduler moves it only on the events its failing plugin registered (Coscheduling:
   a pod added, a PodGroup added or changed), else after 5 minutes.
2. The "resource gap" of a refused ``minResources`` names quantities as Kubernetes prints them
   (``resource gap: map[cpu:2]``), not Go's dump of the Quantity structs.
3. Pod priority is the pod's ``spec.priority`` (0 when unset): the local API server has no
   priority admission to fill it from ``priorityClassName``.
4. The PodGroup controller counts the pods of the group's own namespace (upstream listed the
   label across every namespace) and tells the 48-hour ``Timeout`` event once.
5. No preemption: the profile's PostFilter is Coscheduling's alone (kube-scheduler also runs
   DefaultPreemption, whose message would precede it).
"""

from localcluster.coscheduling.controller import PodGroupController
from localcluster.coscheduling.plugin import CoschedulingArgs
from localcluster.coscheduling.podgroup import POD_GROUP_LABEL, PODGROUPS
from localcluster.coscheduling.scheduler import SCHEDULER_NAME, CoschedulingScheduler

__all__ = [
    "POD_GROUP_LABEL",
    "PODGROUPS",
    "SCHEDULER_NAME",
    "CoschedulingArgs",
    "CoschedulingScheduler",
    "PodGroupController",
]
