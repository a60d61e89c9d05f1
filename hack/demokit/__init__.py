"""The demos behind ``make demo`` (the README's first command, and its variants).

``cli`` picks the demo from the arguments: ``tfjob`` (a distributed training job run by a
host-process operator on a local cluster; the default), ``gang`` (``--gang``: gang scheduling
with kube-batch or Volcano) or ``incluster`` (``--in-cluster``: the operator deployed from
``manifests/``) or ``queue`` (``--queue``: a job Kueue admits, evicts and admits again).
``harness`` is what they share: the example, child processes, the local
cluster, waiting. ``hack/demo.py`` is the door ``make demo`` opens.
"""
