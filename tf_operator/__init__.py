"""tf-operator: a Python port of Kubeflow's tf-operator v0.5.3 (TFJob, kubeflow.org/v1)."""

from tf_operator.version import __version__

__all__ = ["__version__"]
