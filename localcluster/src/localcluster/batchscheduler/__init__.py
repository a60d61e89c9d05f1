"""kube-batch and Volcano for the local cluster: gang scheduling of PodGroups (see
``/work/shared/spec/batch-scheduler.md``-derived design in each module's docstring).

``BatchScheduler(registry, "volcano", ledger=..., conf=..., schedule_period=...)`` schedules
the pods whose ``schedulerName`` is the flavour's; ``bootstrap.install`` puts its CRDs and the
``default`` Queue in place. Layers, each importing only those before it: ``flavours``/``conf``
-> ``api`` -> ``session``/``status``/``errcache`` -> ``plugins``/``actions`` -> ``cache`` ->
``scheduler``.
"""

from localcluster.batchscheduler.flavours import FLAVOURS, Flavour
from localcluster.batchscheduler.scheduler import BatchScheduler
from localcluster.batchscheduler.session import CycleSummary

__all__ = ["FLAVOURS", "BatchScheduler", "CycleSummary", "Flavour"]
