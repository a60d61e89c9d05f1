"""Cluster-side controllers of the local cluster (endpoints) and the shared watch helper."""
