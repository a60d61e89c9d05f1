"""The local cluster's own client-go: what its components use to follow and change the registry.

``informer`` mirrors one resource and calls a handler on each change (``tools/cache``'s
informer), ``keyqueue`` queues keys for one worker with delays and back-off
(``util/workqueue``), ``events`` records core/v1 Events (``tools/record``). The controllers,
kubelets and schedulers all build on this package; it sits right above the API server and below
all of them (the local cluster must not import the operator's client-go).
"""
