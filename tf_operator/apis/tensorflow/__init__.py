"""TFJob API: ``kubeflow.org/v1`` types, defaulting and validation."""
