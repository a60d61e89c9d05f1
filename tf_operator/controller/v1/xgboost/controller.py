"""The XGBoostJob controller: the generic job controller wired with the XGBoostJob kind
(:mod:`.kind`); everything else is the job controller every kind shares."""

from __future__ import annotations

from typing import TypeAlias

from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.common.jobcontroller.jobcontroller import JobController, JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.xgboost.kind import XGBOOSTJOB_KIND
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.logger import logger_for_kind

XGBoostController: TypeAlias = JobController[XGBoostJob]


def new_xgboost_controller(
    kube_client: KubeInterface,
    informer_factory: SharedInformerFactory,
    job_informer: SharedIndexInformer,
    recorder: EventRecorder,
    config: JobControllerConfiguration,
    clock: Clock = REAL_CLOCK,
) -> XGBoostController:
    """The XGBoostJob controller over the shared pod and service informers of
    ``informer_factory``."""
    kind = XGBOOSTJOB_KIND.resource.kind
    logger_for_kind(kind).info("Creating %s controller", kind)
    return JobController(
        XGBOOSTJOB_KIND, kube_client, informer_factory, job_informer, recorder, config, clock
    )
