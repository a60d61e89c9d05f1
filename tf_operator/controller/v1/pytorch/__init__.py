"""The PyTorchJob (``kubeflow.org/v1``) controller, as training-operator v1.9 defines the kind;
the app starts it through the kind registry (:mod:`tf_operator.controller.v1.registry`)."""

from tf_operator.controller.v1.pytorch.controller import PyTorchController, new_pytorch_controller
from tf_operator.controller.v1.pytorch.informer import PYTORCHJOBS

__all__ = ["PYTORCHJOBS", "PyTorchController", "new_pytorch_controller"]
