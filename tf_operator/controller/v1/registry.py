"""The job kinds this binary knows, by the name ``--enable-scheme`` gives them.

As training-operator v1.9's ``register_controller.go`` maps a kind to its reconciler's set-up,
:data:`SCHEMES` maps a scheme name (the kind in lower case, matched in any case) to a
:class:`Scheme`: its job resource, where its CRD is, its informer's resync period, whose
defaults its jobs get, and how to build its controller. A scheme's controller is a
``JobController`` of its own job class, built from typed settings; the registry hands it out
as a :class:`Controller`, all the app needs to run it. The app enables ``tfjob`` only unless
told otherwise (v1.9 enabled every kind; divergence D80).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9, Defaults
from tf_operator.common.jobcontroller.jobcontroller import JobControllerConfiguration
from tf_operator.control.object_control import EventRecorder
from tf_operator.controller.v1.jax.controller import new_jax_controller
from tf_operator.controller.v1.jax.informer import JAXJOBS
from tf_operator.controller.v1.paddle.controller import new_paddle_controller
from tf_operator.controller.v1.paddle.informer import PADDLEJOBS
from tf_operator.controller.v1.pytorch.controller import new_pytorch_controller
from tf_operator.controller.v1.pytorch.informer import PYTORCHJOBS
from tf_operator.controller.v1.tensorflow.controller import new_tf_controller
from tf_operator.controller.v1.tensorflow.informer import TFJOB_RESYNC_PERIOD, TFJOBS
from tf_operator.controller.v1.xgboost.controller import new_xgboost_controller
from tf_operator.controller.v1.xgboost.informer import XGBOOSTJOBS
from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.client import KubeInterface, Resource
from tf_operator.k8s.informers import SharedInformerFactory


class Controller(Protocol):
    """What the app runs of a kind's controller."""

    def run(self, threadiness: int, stop_event: threading.Event) -> None: ...


class NewController(Protocol):
    def __call__(
        self,
        kube_client: KubeInterface,
        informer_factory: SharedInformerFactory,  # the shared pod and service informers
        job_informer: SharedIndexInformer,
        recorder: EventRecorder,
        config: JobControllerConfiguration,
        /,
    ) -> Controller: ...


@dataclass(frozen=True)
class Scheme:
    """One job kind the binary can run."""

    name: str  # what --enable-scheme names it ("tfjob")
    component: str  # the source of its controller's events
    resource: Resource  # its job resource; the operator refuses to start without its CRD
    crd_manifest: str  # where manifests/ has its CRD, for that refusal's message
    resync_period: float | None  # its job informer's; None: --resync-period's
    # The defaults its jobs get where v1.9 changed v0.5.3's; None: the operator's --defaults.
    defaults: Defaults | None
    new_controller: NewController

    @property
    def crd_name(self) -> str:
        return f"{self.resource.plural}.{self.resource.group}"

    def configuration(self, base: JobControllerConfiguration) -> JobControllerConfiguration:
        """The operator's settings as this kind's controller takes them."""
        if self.defaults is None:
            return base
        return JobControllerConfiguration(
            enable_gang_scheduling=base.enable_gang_scheduling,
            gang_scheduler_name=base.gang_scheduler_name,
            pod_updates_batch_period=base.pod_updates_batch_period,
            defaults=self.defaults,
        )


TFJOB = Scheme(
    name="tfjob",
    component="tf-operator",  # v0.5.3's
    resource=TFJOBS,
    crd_manifest="manifests/base/crd.yaml",
    resync_period=TFJOB_RESYNC_PERIOD,  # v0.5.3's, whatever --resyc-period says
    defaults=None,
    new_controller=new_tf_controller,
)

PYTORCHJOB = Scheme(
    name="pytorchjob",
    component="pytorchjob-controller",  # v1.9's
    resource=PYTORCHJOBS,
    crd_manifest="manifests/components/pytorchjob/crd.yaml",
    resync_period=None,
    # v1.9's: v0.5.3 had no PyTorchJob whose defaults a job could keep (D81)
    defaults=DEFAULTS_V1_9,
    new_controller=new_pytorch_controller,
)

XGBOOSTJOB = Scheme(
    name="xgboostjob",
    component="xgboostjob-controller",  # v1.9's
    resource=XGBOOSTJOBS,
    crd_manifest="manifests/components/xgboostjob/crd.yaml",
    resync_period=None,
    defaults=DEFAULTS_V1_9,  # as for PyTorchJob: v0.5.3 had no such kind (D81)
    new_controller=new_xgboost_controller,
)

JAXJOB = Scheme(
    name="jaxjob",
    component="jaxjob-controller",  # v1.9's
    resource=JAXJOBS,
    crd_manifest="manifests/components/jaxjob/crd.yaml",
    resync_period=None,
    defaults=DEFAULTS_V1_9,
    new_controller=new_jax_controller,
)

PADDLEJOB = Scheme(
    name="paddlejob",
    component="paddlejob-controller",  # v1.9's
    resource=PADDLEJOBS,
    crd_manifest="manifests/components/paddlejob/crd.yaml",
    resync_period=None,
    defaults=DEFAULTS_V1_9,
    new_controller=new_paddle_controller,
)

SCHEMES: dict[str, Scheme] = {s.name: s for s in (TFJOB, PYTORCHJOB, XGBOOSTJOB, JAXJOB, PADDLEJOB)}
DEFAULT_SCHEMES = (TFJOB.name,)


class UnknownSchemeError(ValueError):
    pass


def enabled_schemes(names: Iterable[str]) -> list[Scheme]:
    """The schemes named (in any case), each once, in the order given."""
    found: dict[str, Scheme] = {}
    for name in names:
        scheme = SCHEMES.get(name.lower())
        if scheme is None:
            raise UnknownSchemeError(
                f"scheme {name} is not supported: expected one of {', '.join(SCHEMES)}"
            )
        found.setdefault(scheme.name, scheme)
    return list(found.values())
