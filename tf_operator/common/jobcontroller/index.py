"""Per-job lookup of pods and services through informer indices.

v0.5.3 ran the claim over every pod (and service) of the job's namespace on each sync. The
claim only acts on objects whose controller ref carries the job's UID (claimed, or released
when their labels no longer match) and on orphans matching the job's selector (adopted), and
every object the selector matches carries the job-name label. So the union of the objects filed
under ``namespace/<controller uid>`` and under ``namespace/<job-name label value>`` holds all
the claim could act on. Index values include the namespace, which scoped the old lookup.
"""

from __future__ import annotations

from tf_operator.k8s.cache import Indexer, SharedIndexInformer
from tf_operator.k8s.controller.index import (
    add_missing_indexers,
    namespaced_controller_uid_index_func,
    namespaced_label_index_func,
)
from tf_operator.k8s.objects import Obj, meta

CONTROLLER_UID_INDEX = "jobcontroller:namespace/controller-uid"


def job_name_index_name(label_key: str) -> str:
    """The index name for objects filed under ``namespace/<value of label_key>``."""
    return f"jobcontroller:namespace/label:{label_key}"


def add_job_indexers(informer: SharedIndexInformer, job_name_label_key: str) -> None:
    """Register both indices on an informer (before it starts) unless already present."""
    add_missing_indexers(
        informer,
        {
            CONTROLLER_UID_INDEX: namespaced_controller_uid_index_func,
            job_name_index_name(job_name_label_key): namespaced_label_index_func(
                job_name_label_key
            ),
        },
    )


def objects_for_job(
    indexer: Indexer, job_name_label_key: str, namespace: str, job_name_value: str, uid: str
) -> list[Obj]:
    """Cached objects controlled by ``uid`` or labelled with the job's name, each once."""
    found: dict[str, Obj] = {}
    for obj in indexer.by_index(CONTROLLER_UID_INDEX, f"{namespace}/{uid}"):
        found[meta(obj).get("name", "")] = obj
    label_index = job_name_index_name(job_name_label_key)
    for obj in indexer.by_index(label_index, f"{namespace}/{job_name_value}"):
        found.setdefault(meta(obj).get("name", ""), obj)
    return list(found.values())
