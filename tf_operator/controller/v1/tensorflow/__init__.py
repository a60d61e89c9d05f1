"""The TFJob (``kubeflow.org/v1``) controller; the app starts it through the kind registry
(:mod:`tf_operator.controller.v1.registry`)."""

from tf_operator.controller.v1.tensorflow.controller import TFController, new_tf_controller
from tf_operator.controller.v1.tensorflow.informer import TFJOBS

__all__ = ["TFJOBS", "TFController", "new_tf_controller"]
