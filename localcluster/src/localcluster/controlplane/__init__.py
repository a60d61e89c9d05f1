"""The two control planes the local cluster can run: ``emulated`` (the API-server emulator,
in this process) and ``real`` (etcd and Kubernetes' own servers, built from Go modules)."""
