"""What a real Kubernetes v1.37 control plane must enable for Kubernetes' own gang scheduling,
in one place: the launcher of the real control plane passes these to its processes, and the
emulator serves the API they turn on (``localcluster.controlplane.emulated``).

- ``REAL_FEATURE_GATES``: for kube-apiserver (``--feature-gates``: without ``GenericWorkload``
  it has no Workload or PodGroup storage and drops a pod's ``spec.schedulingGroup``) and
  kube-scheduler (``--feature-gates``: ``GenericWorkload`` adds the ``GangScheduling`` plugin to
  the default profile, the one that holds a group's pods until ``minCount`` of them fit).
  ``GenericWorkload`` is beta in 1.37 but off by default. ``WorkloadWithJob`` (the in-tree Job
  controller making groups for batch Jobs) stays off: the operator makes its own, and
  kube-controller-manager needs no gate for them (its garbage collector follows the owner
  references whatever the kind). ``CompositePodGroup``, ``TopologyAwareWorkloadScheduling`` and
  ``PodGroupPreemptionPolicy`` (alpha) stay off: the operator writes none of their fields, and
  the emulator refuses them as the real server does with the gates off.
- ``REAL_RUNTIME_CONFIG``: for kube-apiserver (``--runtime-config``): beta API versions are off
  by default since 1.24, so ``scheduling.k8s.io/v1beta1`` (the version the 1.37 server serves
  Workload and PodGroup at, beside the alpha ``v1alpha3``) must be asked for.

``feature_gates_flag`` and ``runtime_config_flag`` render them as the flags take them.
"""

from __future__ import annotations

REAL_FEATURE_GATES: dict[str, bool] = {"GenericWorkload": True}
REAL_RUNTIME_CONFIG: dict[str, str] = {"scheduling.k8s.io/v1beta1": "true"}


def feature_gates_flag(gates: dict[str, bool] | None = None) -> str:
    """``--feature-gates=A=true,B=false`` (sorted) for kube-apiserver and kube-scheduler."""
    chosen = REAL_FEATURE_GATES if gates is None else gates
    return "--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(chosen.items()))


def runtime_config_flag(config: dict[str, str] | None = None) -> str:
    """``--runtime-config=group/version=true`` (sorted) for kube-apiserver."""
    chosen = REAL_RUNTIME_CONFIG if config is None else config
    return "--runtime-config=" + ",".join(f"{k}={v}" for k, v in sorted(chosen.items()))
