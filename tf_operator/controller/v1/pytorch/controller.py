"""The PyTorchJob controller: the generic job controller wired with the PyTorchJob kind.

A ``PyTorchController`` is a ``JobController[PyTorchJob]``; everything but what
:mod:`.kind` contributes (the environment, the master role, the success rule) is the job
controller every kind shares (:mod:`tf_operator.common.jobcontroller.jobcontroller`).
"""

from __future__ import annotations

from typing import TypeAlias

from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.common.jobcontroller.jobcontroller import JobController, JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.pytorch.kind import PYTORCHJOB_KIND
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.logger import logger_for_kind

PyTorchController: TypeAlias = JobController[PyTorchJob]


def new_pytorch_controller(
    kube_client: KubeInterface,
    informer_factory: SharedInformerFactory,
    pytorchjob_informer: SharedIndexInformer,
    recorder: EventRecorder,
    config: JobControllerConfiguration,
    clock: Clock = REAL_CLOCK,
) -> PyTorchController:
    """The PyTorchJob controller over the shared pod and service informers of
    ``informer_factory``."""
    logger_for_kind(PYTORCHJOB_KIND.resource.kind).info(
        "Creating %s controller", PYTORCHJOB_KIND.resource.kind
    )
    return JobController(
        PYTORCHJOB_KIND, kube_client, informer_factory, pytorchjob_informer, recorder, config, clock
    )
