"""The PaddleJob (``kubeflow.org/v1``) controller, as training-operator v1.9 defines the kind;
the app starts it through the kind registry (:mod:`tf_operator.controller.v1.registry`)."""

from tf_operator.controller.v1.paddle.controller import PaddleController, new_paddle_controller
from tf_operator.controller.v1.paddle.informer import PADDLEJOBS

__all__ = ["PADDLEJOBS", "PaddleController", "new_paddle_controller"]
