"""Listers: read-only, selector-aware views of an informer's indexer.

A :class:`Lister` answers "which objects match this label selector" across
all namespaces or, through :meth:`Lister.namespaced`, within one namespace
(served from the namespace index, so it does not scan the whole cache).
Results are the cached objects themselves: treat them as read-only and
deep-copy before changing anything (client-go's rule for listers too).
"""

from tf_operator.k8s.listers.lister import (
    Lister,
    NamespaceLister,
    list_all,
    list_all_by_namespace,
)

__all__ = ["Lister", "NamespaceLister", "list_all", "list_all_by_namespace"]
