"""Controller references and the claim rules of workload controllers (adopt and release).

A controller owns the objects whose ``ownerReferences`` carry its UID with ``controller:
true``. Like kube-controller-manager's ``ControllerRefManager``, a controller adopts orphans
its selector matches (adding its reference, guarded by the object's resourceVersion so a
concurrent change wins) and releases objects it owns that its selector no longer matches;
objects being deleted are neither adopted nor released.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from localcluster.apimachinery.gvr import GVR
from localcluster.apimachinery.selectors import label_selector_matches
from localcluster.client.api import ClusterClient

logger = logging.getLogger(__name__)


def controller_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return cast(dict[str, Any] | None, ref)
    return None


def controller_keys(kind: str, *objs: dict[str, Any] | None) -> set[str]:
    """``namespace/name`` of the controllers of ``kind`` of the given objects (None skipped)."""
    keys = set()
    for obj in objs:
        ref = controller_ref(obj) if obj is not None else None
        if obj is not None and ref is not None and ref.get("kind") == kind:
            keys.add(f"{obj['metadata'].get('namespace', '')}/{ref['name']}")
    return keys


def selecting(owners: list[dict[str, Any]], obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The owners whose ``spec.selector`` matches ``obj``'s labels (candidates to adopt it)."""
    labels = obj["metadata"].get("labels") or {}
    return [
        o for o in owners if label_selector_matches((o.get("spec") or {}).get("selector"), labels)
    ]


def owner_reference(owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def claim(
    client: ClusterClient,
    gvr: GVR,
    owner: dict[str, Any],
    selector: dict[str, Any],
    candidates: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The candidates ``owner`` controls after adopting matching orphans and releasing
    non-matching ones (writes through ``client``; a lost race just skips the object)."""
    uid = owner["metadata"]["uid"]
    owner_deleting = bool(owner["metadata"].get("deletionTimestamp"))
    owned = []
    for obj in candidates:
        meta = obj["metadata"]
        ref = controller_ref(obj)
        matches = label_selector_matches(selector, meta.get("labels") or {})
        if ref is not None and ref.get("uid") == uid:
            if matches or owner_deleting:
                owned.append(obj)
            elif not meta.get("deletionTimestamp"):
                refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid]
                _set_owners(client, gvr, obj, refs)
        elif ref is None and matches and not owner_deleting and not meta.get("deletionTimestamp"):
            adopted = _set_owners(
                client, gvr, obj, [*(meta.get("ownerReferences") or []), owner_reference(owner)]
            )
            if adopted is not None:
                owned.append(adopted)
    return owned


def _set_owners(
    client: ClusterClient, gvr: GVR, obj: dict[str, Any], refs: list[dict[str, Any]]
) -> dict[str, Any] | None:
    meta = obj["metadata"]
    patch = {"metadata": {"ownerReferences": refs, "resourceVersion": meta["resourceVersion"]}}
    try:
        return client.patch(gvr, meta.get("namespace"), meta["name"], patch, "merge")
    except Exception as err:  # noqa: BLE001 - changed or gone meanwhile: the next sync decides
        logger.debug("could not change the owners of %s: %s", meta["name"], err)
        return None
