"""The local cluster's default scheduler: ``Scheduler`` binds pods to registered nodes."""

from localcluster.scheduler.scheduler import SCHEDULER_NAME, Scheduler

__all__ = ["SCHEDULER_NAME", "Scheduler"]
