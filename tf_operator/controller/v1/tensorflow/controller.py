"""The TFJob controller: the generic job controller wired with the TFJob kind.

v0.5.3's ``controller.go`` held the run loop, ``syncTFJob`` and ``reconcileTFJobs`` for TFJob
alone. Here those live once in :mod:`tf_operator.common.jobcontroller.jobcontroller` (readable
top to bottom there), and a TFJob contributes only what is specific to it
(:mod:`.kind`: labels, TF_CONFIG, the success rule), as kubeflow/common later arranged it.
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.apis.common.v1.run_policy import DEFAULTS, V0_5_3
from tf_operator.common.jobcontroller.jobcontroller import JobController, JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.tensorflow.kind import TFJOB_KIND
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.informers import SharedInformerFactory

log = logging.getLogger(__name__)


class TFController(JobController):
    """The TFJob controller; ``options`` supplies the gang-scheduling settings."""

    def __init__(
        self,
        kube_client: KubeInterface,
        informer_factory: SharedInformerFactory,
        tfjob_informer: SharedIndexInformer,
        recorder: EventRecorder,
        options: Any,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        log.info("Creating TFJob controller")
        config = JobControllerConfiguration(
            enable_gang_scheduling=bool(getattr(options, "enable_gang_scheduling", False)),
            gang_scheduler_name=getattr(options, "gang_scheduler_name", "") or "kube-batch",
            pod_updates_batch_period=float(getattr(options, "pod_updates_batch_period", 0.0)),
            defaults=DEFAULTS[getattr(options, "defaults", V0_5_3)],
        )
        super().__init__(
            TFJOB_KIND, kube_client, informer_factory, tfjob_informer, recorder, config, clock
        )
