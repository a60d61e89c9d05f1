"""The TFJob controller: the generic job controller wired with the TFJob kind.

v0.5.3's ``controller.go`` held the run loop, ``syncTFJob`` and ``reconcileTFJobs`` for TFJob
alone. Here those live once in :mod:`tf_operator.common.jobcontroller.jobcontroller` (readable
top to bottom there), and a TFJob contributes only what is specific to it
(:mod:`.kind`: labels, TF_CONFIG, the success rule), as kubeflow/common later arranged it. A
``TFController`` is a ``JobController[TFJob]``: :func:`new_tf_controller` (v0.5.3's
``NewTFController``) builds one from typed settings.
"""

from __future__ import annotations

from typing import TypeAlias

from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.jobcontroller import JobController, JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.tensorflow.kind import TFJOB_KIND
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.logger import logger_for_kind

TFController: TypeAlias = JobController[TFJob]


def new_tf_controller(
    kube_client: KubeInterface,
    informer_factory: SharedInformerFactory,
    tfjob_informer: SharedIndexInformer,
    recorder: EventRecorder,
    config: JobControllerConfiguration,
    clock: Clock = REAL_CLOCK,
) -> TFController:
    """The TFJob controller over the shared pod and service informers of ``informer_factory``."""
    logger_for_kind(TFJOB_KIND.resource.kind).info(
        "Creating %s controller", TFJOB_KIND.resource.kind
    )
    return JobController(
        TFJOB_KIND, kube_client, informer_factory, tfjob_informer, recorder, config, clock
    )
