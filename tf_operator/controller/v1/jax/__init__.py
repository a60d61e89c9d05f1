"""The JAXJob (``kubeflow.org/v1``) controller, as training-operator v1.9 defines the kind;
the app starts it through the kind registry (:mod:`tf_operator.controller.v1.registry`)."""

from tf_operator.controller.v1.jax.controller import JAXController, new_jax_controller
from tf_operator.controller.v1.jax.informer import JAXJOBS

__all__ = ["JAXJOBS", "JAXController", "new_jax_controller"]
