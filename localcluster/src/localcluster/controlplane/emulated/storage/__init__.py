"""The emulator's storage, what etcd is to kube-apiserver: the ``Store`` (objects, the global
resourceVersion, history ring and indexes), ``Watch`` queues, LIST ``paging`` (snapshots and
continue tokens) and the garbage collector (``gc``) that acts on committed events. It knows
nothing of validation or defaulting: that is ``admission``, applied by the ``Registry`` above.
"""
