"""Informer machinery: client-go's ``tools/cache`` in Python.

Reading order: ``keys`` and ``index`` (how objects are filed),
``thread_safe_store`` and ``store`` (the cache), ``delta_fifo`` (changes
queued per object), ``listwatch`` and ``reflector`` (list+watch into the
queue), ``engine`` (queue into the cache), ``shared_informer`` (cache plus
handlers). Objects are plain dicts and shared by reference: never mutate one
obtained from a cache, deep-copy it first.
"""

from tf_operator.k8s.cache.delta_fifo import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    FIFOClosedError,
    RequeueError,
)
from tf_operator.k8s.cache.engine import EngineConfig, InformerEngine
from tf_operator.k8s.cache.handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from tf_operator.k8s.cache.index import (
    NAMESPACE_INDEX,
    Indexers,
    IndexFunc,
    controller_uid_index_func,
    label_index_func,
    meta_namespace_index_func,
)
from tf_operator.k8s.cache.keys import (
    KeyFuncError,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from tf_operator.k8s.cache.listwatch import ListWatch
from tf_operator.k8s.cache.reflector import Backoff, Reflector
from tf_operator.k8s.cache.shared_informer import (
    ProcessorListener,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from tf_operator.k8s.cache.store import Indexer, new_indexer, new_store
from tf_operator.k8s.cache.thread_safe_store import ThreadSafeStore

__all__ = [
    "ADDED",
    "DELETED",
    "NAMESPACE_INDEX",
    "REPLACED",
    "SYNC",
    "UPDATED",
    "Backoff",
    "EngineConfig",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "FIFOClosedError",
    "FilteringResourceEventHandler",
    "IndexFunc",
    "Indexer",
    "InformerEngine",
    "Indexers",
    "KeyFuncError",
    "ListWatch",
    "ProcessorListener",
    "Reflector",
    "RequeueError",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SharedIndexInformer",
    "ThreadSafeStore",
    "controller_uid_index_func",
    "deletion_handling_meta_namespace_key_func",
    "label_index_func",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "new_indexer",
    "new_store",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
]
