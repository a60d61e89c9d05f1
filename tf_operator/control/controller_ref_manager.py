"""Claiming objects for a controller: adopt matching orphans, release non-matching children.

The rules are client-go's ``BaseControllerRefManager.ClaimObject`` (which v0.5.3 vendors):

* owned by another controller (controller ref with another UID): ignore;
* owned by us and matching the selector: claimed;
* owned by us, not matching: release it (unless we are being deleted); not claimed;
* orphan: adopt it if we are not being deleted, it matches and is not itself being deleted.

Before the first adoption of a pass, ``can_adopt`` re-reads the owner (a live quorum GET for
pods and, unlike v0.5.3, for services too: divergence D25) and refuses if it is gone, was
replaced (other UID) or is being deleted. Releases and adoptions are strategic-merge patches
through the object's control; an object that vanished meanwhile (404) is simply not claimed.
One manager class serves pods and services; the subclasses only name the kind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tf_operator.control.object_control import ObjectControl
from tf_operator.control.util import job_logger
from tf_operator.k8s.client import is_invalid, is_not_found
from tf_operator.k8s.labels import Selector
from tf_operator.k8s.objects import Obj, get_controller_of, labels_of, meta, namespaced_name

ObjectFilter = Callable[[Obj], bool]


class ClaimErrors(Exception):
    """Several claim operations failed; ``errors`` holds each one."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


_NOT_RUN = object()


class ControllerRefManager:
    """Claims objects of one kind (``noun``) for ``controller`` through ``control.patch``."""

    noun = "Object"

    def __init__(
        self,
        control: ObjectControl,
        controller: Any,
        selector: Selector,
        api_version: str,
        kind: str,
        can_adopt: Callable[[], None],
    ) -> None:
        self.control = control
        self.controller = controller
        self.selector = selector
        self.api_version = api_version
        self.kind = kind
        self._can_adopt = can_adopt
        self._can_adopt_once = threading.Lock()
        self._can_adopt_result: object = _NOT_RUN  # then None (passed) or the error
        self._uid = str(meta(controller).get("uid", ""))  # read once: every object checks it

    def _controller_deleting(self) -> bool:
        return bool(meta(self.controller).get("deletionTimestamp"))

    def can_adopt(self) -> None:
        """Run the adoption pre-check once per manager; raise its error every time."""
        with self._can_adopt_once:
            if self._can_adopt_result is _NOT_RUN:
                try:
                    self._can_adopt()
                    self._can_adopt_result = None
                except Exception as err:  # remembered and re-raised for every adoption
                    self._can_adopt_result = err
            if isinstance(self._can_adopt_result, BaseException):
                raise self._can_adopt_result

    def claim_object(self, obj: Obj, match: ObjectFilter) -> bool:
        ref = get_controller_of(obj)
        if ref is not None:
            if ref.get("uid") != self._uid:
                return False
            if match(obj):
                return True
            if self._controller_deleting():
                return False
            try:
                self.release(obj)
            except Exception as err:
                if is_not_found(err):
                    return False
                raise
            return False
        if self._controller_deleting() or not match(obj):
            return False
        if meta(obj).get("deletionTimestamp"):
            return False
        try:
            self.adopt(obj)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        return True

    def claim(self, objects: list[Obj], *filters: ObjectFilter) -> list[Obj]:
        """Claim every object; raise :class:`ClaimErrors` (after trying all) if any failed."""

        def match(obj: Obj) -> bool:
            return self.selector.matches(labels_of(obj)) and all(f(obj) for f in filters)

        claimed: list[Obj] = []
        errors: list[BaseException] = []
        for obj in objects:
            try:
                if self.claim_object(obj, match):
                    claimed.append(obj)
            except Exception as err:
                errors.append(err)
        if errors:
            raise ClaimErrors(errors)
        return claimed

    def adopt(self, obj: Obj) -> None:
        try:
            self.can_adopt()
        except Exception as err:
            raise RuntimeError(f"can't adopt {self.noun} {namespaced_name(obj)}: {err}") from err
        m = meta(obj)
        self.control.patch(m.get("namespace", ""), m.get("name", ""), self.adopt_patch(obj))

    def release(self, obj: Obj) -> None:
        m = meta(obj)
        job_logger(self.controller).info(
            "patching %s %s to remove its controllerRef to %s",
            self.noun.lower(),
            namespaced_name(obj),
            self.kind,
        )
        try:
            self.control.patch(m.get("namespace", ""), m.get("name", ""), self.release_patch(obj))
        except Exception as err:
            # Gone, or its owner references were already changed so the patch is invalid.
            if is_not_found(err) or is_invalid(err):
                return
            raise

    def adopt_patch(self, obj: Obj) -> Obj:
        return {
            "metadata": {
                "ownerReferences": [
                    {
                        "apiVersion": self.api_version,
                        "kind": self.kind,
                        "name": meta(self.controller).get("name", ""),
                        "uid": self._uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "uid": meta(obj).get("uid", ""),
            }
        }

    def release_patch(self, obj: Obj) -> Obj:
        return {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": self._uid}],
                "uid": meta(obj).get("uid", ""),
            }
        }


class PodControllerRefManager(ControllerRefManager):
    """Claims pods through a pod control (v0.5.3's ``PodControllerRefManager``)."""

    noun = "Pod"

    def claim_pods(self, pods: list[Obj], *filters: ObjectFilter) -> list[Obj]:
        return self.claim(pods, *filters)
