"""The local cluster's two control planes, behind the same client seam.

``emulated``: the in-process API-server emulator (``Registry`` plus an HTTP(S) front end), fast
and self-contained. ``real``: etcd, kube-apiserver, kube-controller-manager and kube-scheduler
run as processes, built from Kubernetes' Go modules. The agents (kubelets, schedulers, controllers) import neither: they talk to
whichever one runs through ``localcluster.client.ClusterClient``.
"""
