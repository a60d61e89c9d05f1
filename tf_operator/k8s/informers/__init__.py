"""Shared informer factories: one informer per resource, shared by every consumer.

:class:`SharedInformerFactory` hands out the same :class:`SharedIndexInformer`
for a resource however often it is asked, so the pod controller and the
service controller share one pod watch. ``start`` runs every informer
requested so far (informers requested later need another ``start``).
"""

from tf_operator.k8s.informers.factory import SharedInformerFactory

__all__ = ["SharedInformerFactory"]
