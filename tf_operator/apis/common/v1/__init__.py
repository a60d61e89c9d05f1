"""Shared job API types (``kubeflow.org`` common/v1); see :mod:`.types`."""
