"""The local cluster's own client-go: how its components follow and change the cluster's state.

``api`` is the seam: ``ClusterClient``, the one narrow Protocol every agent (kubelets,
schedulers, controllers) is given, with ``WatchStream``, ``Page`` and ``ResourceInfo``. Two
implementations: ``inprocess.InProcessClient`` over the emulator's ``Registry`` and
``http.HttpClient`` over HTTP(S) to any API server; the assembly (``LocalCluster``) builds one
and hands it to everything. Both raise ``localcluster.apimachinery.errors.StatusError``.

On top of it: ``informer`` mirrors one resource and calls a handler on each change
(``tools/cache``'s informer), ``keyqueue`` queues keys for one worker with delays and back-off
(``util/workqueue``), ``events`` records core/v1 Events (``tools/record``). Only
``inprocess`` imports a control plane (an import-linter contract); the local cluster must not
import the operator's client-go.
"""
