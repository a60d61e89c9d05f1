"""Our client-go: informers, workqueue, events and leader election.

Nothing in this package knows about TFJobs; it is the Python counterpart of
client-go's ``tools/cache``, ``util/workqueue``, ``tools/record`` and
``tools/leaderelection``.
"""
