"""The TFJob (``kubeflow.org/v1``) controller; the app starts :class:`TFController`."""

from tf_operator.controller.v1.tensorflow.controller import TFController
from tf_operator.controller.v1.tensorflow.informer import TFJOBS, new_tfjob_informer

__all__ = ["TFJOBS", "TFController", "new_tfjob_informer"]
