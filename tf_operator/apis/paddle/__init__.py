"""PaddleJob API: ``kubeflow.org/v1`` types, defaulting and validation, as training-operator
v1.9 defines them."""
