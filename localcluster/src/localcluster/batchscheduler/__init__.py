"""kube-batch (v0.4.2) and Volcano (v1.8) for the local cluster: gang scheduling of PodGroups.

``BatchScheduler(client, "volcano", ledger=..., conf=..., schedule_period=...)`` schedules the
pods whose ``schedulerName`` is the flavour's; ``bootstrap.install`` puts its CRDs and the
``default`` Queue in place; ``LocalCluster(batch_schedulers=("volcano",))`` does both. Layers,
each importing only those before it: ``flavours``/``conf`` -> ``api`` -> ``session``/
``status``/``errcache``/``pqueue`` -> ``plugins``/``actions`` -> ``cache`` -> ``scheduler``.

Deliberate differences from upstream (behaviour a user could observe; modules cite them as
"difference N"):

1. Volcano wraps each job's allocate turn in a statement; kube-batch v0.4.2 did not (a gang that
   could not be placed held its allocations until the cycle ended, kube-batch#514). Both
   flavours here commit or discard per turn.
2. Resources are compared exactly; upstream allowed 10m CPU / 10Mi memory of slack and bound
   pods the kubelet then rejected (kube-batch#938).
3. Upstream validated gangs at session open, before any plugin registered the check (so it
   never fired in kube-batch). Here actions skip jobs with fewer pods than minMember and no
   ``NotEnoughTasks`` condition is written.
4. kube-batch v0.4.2 needed more than minMember placed pods for ``Running`` and ignored
   Succeeded pods (a finished gang fell back to ``Pending``); both flavours use ">= minMember,
   Succeeded counted" (kube-batch v0.5's rule).
5. Upstream emitted the PodGroup and pod events every cycle (Volcano #1094); here an event is
   emitted only when its reason or message changes. A stale ``Unschedulable`` condition stays
   after the gang is ready, as upstream (the phase is what counts).
6. Reclaim and preempt evict through statements (undone when the gang still cannot be
   served), check coverage per dimension and plan against resources already being released.
7. kube-batch's priority plugin had no preemption verdict; Volcano's rule is used in both.
8. Ties between nodes go to the smallest name, between jobs/queues/tasks to creation time then
   name (upstream: random, UID, map order).
9. All schedulers share one node ledger: a pod bound by the default scheduler counts at once
   (kube-batch only saw other schedulers' pods once they left Pending).
10. A Queue of weight 0 counts as weight 1 (upstream starved it).
11. Predicate reasons are the plain Kubernetes texts; Volcano prefixed them with its plugin
    names ("plugin NodeAffinity predicates failed ...").
12. Preemptors are only starving jobs, and a victim's job must have a lower priority.
13. Replicas without resource requests count as ready in both flavours (Volcano's rule), so a
    TFJob whose PS has no requests is not stuck behind its own gang; kube-batch v0.4.2 only
    got there because it never rolled back (item 1).
14. Pods without a group annotation form a one-member shadow group in both flavours; Volcano's
    controller would create a real ``podgroup-<owner uid>`` object instead.
15. Queues: ``capability``, ``guarantee`` and Volcano's overcommit-based ``enqueue`` rejection
    (``minResources``) are not modelled; without ``minResources`` (the operator never sets
    it) Volcano admits every job, as here.
16. A pod the scheduler cannot evaluate (malformed quantity, selector, affinity) gets
    ``PodScheduled=False/SchedulerError`` and a ``FailedScheduling`` event (kube-scheduler's
    wording); upstream's informers would never have admitted it.
17. In allocate a queue goes back into the queue heap after its turn, as kube-batch v0.4.2 and
    Volcano from v1.10.0 do; Volcano v1.8 pushed it back before the turn, still holding its old
    share, so it won the next pop again and a lighter queue lost the slots left to it.
"""

from localcluster.batchscheduler.flavours import FLAVOURS, Flavour
from localcluster.batchscheduler.scheduler import BatchScheduler
from localcluster.batchscheduler.session import CycleSummary

__all__ = ["FLAVOURS", "BatchScheduler", "CycleSummary", "Flavour"]
