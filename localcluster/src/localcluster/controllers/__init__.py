"""Cluster-side controllers of the local cluster: Deployment, ReplicaSet, Endpoints, namespace objects and ClusterRole aggregation."""
