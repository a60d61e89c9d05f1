"""The real control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler.

Built from Kubernetes' and etcd's Go modules on first need (``build``), started on loopback
with the certificates and identities a production cluster has (``pki``, ``plane``), one
``ManagedProcess`` each (``process``). The local cluster attaches its kubelets and schedulers
to it over HTTP, as it attaches them to the emulated control plane in-process.
"""

from localcluster.controlplane.real.build import (
    ControlPlaneUnavailable,
    ensure_binaries,
    pinned_versions,
)
from localcluster.controlplane.real.plane import RealControlPlane

__all__ = ["ControlPlaneUnavailable", "RealControlPlane", "ensure_binaries", "pinned_versions"]
