"""The XGBoostJob (``kubeflow.org/v1``) controller, as training-operator v1.9 defines the kind;
the app starts it through the kind registry (:mod:`tf_operator.controller.v1.registry`)."""

from tf_operator.controller.v1.xgboost.controller import XGBoostController, new_xgboost_controller
from tf_operator.controller.v1.xgboost.informer import XGBOOSTJOBS

__all__ = ["XGBOOSTJOBS", "XGBoostController", "new_xgboost_controller"]
