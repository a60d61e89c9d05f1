"""A local Kubernetes cluster for tests and demos: API server emulator, nodes, kubelets.

``LocalCluster`` assembles everything in-process; ``tf-operator-localcluster``
(``cli``) serves one from the command line.
"""

from localcluster.cluster import LocalCluster, NodeSpec, SimulatedTiming

__all__ = ["LocalCluster", "NodeSpec", "SimulatedTiming"]
