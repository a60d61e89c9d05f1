"""The JAXJob controller: the generic job controller wired with the JAXJob kind
(:mod:`.kind`); everything else is the job controller every kind shares."""

from __future__ import annotations

from typing import TypeAlias

from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.common.jobcontroller.jobcontroller import JobController, JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.jax.kind import JAXJOB_KIND
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.logger import logger_for_kind

JAXController: TypeAlias = JobController[JAXJob]


def new_jax_controller(
    kube_client: KubeInterface,
    informer_factory: SharedInformerFactory,
    job_informer: SharedIndexInformer,
    recorder: EventRecorder,
    config: JobControllerConfiguration,
    clock: Clock = REAL_CLOCK,
) -> JAXController:
    """The JAXJob controller over the shared pod and service informers of
    ``informer_factory``."""
    kind = JAXJOB_KIND.resource.kind
    logger_for_kind(kind).info("Creating %s controller", kind)
    return JobController(
        JAXJOB_KIND, kube_client, informer_factory, job_informer, recorder, config, clock
    )
