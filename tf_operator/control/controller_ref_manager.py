"""Claiming objects for a controller: adopt matching orphans, release non-matching children.

The rules are client-go's ``BaseControllerRefManager.ClaimObject`` (which v0.5.3 vendors):

* owned by another controller (controller ref with another UID): ignore;
* owned by us and matching the selector: claimed;
* owned by us, not matching: release it (unless we are being deleted); not claimed;
* orphan: adopt it if we are not being deleted, it matches and is not itself being deleted.

Before the first adoption of a pass, ``can_adopt`` re-reads the owner (a live quorum GET for
pods and, unlike v0.5.3, for services too: spec §10 #26) and refuses if it is gone, was
replaced (other UID) or is being deleted. Releases and adoptions are strategic-merge patches;
an object that vanished meanwhile (404) is simply not claimed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from tf_operator.control.util import get_controller_of, labels_of, meta
from tf_operator.k8s.client import is_invalid, is_not_found

log = logging.getLogger(__name__)


class ClaimErrors(Exception):
    """Several claim operations failed; ``errors`` holds each one."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


class BaseControllerRefManager:
    """Claim logic shared by the pod and service managers."""

    def __init__(
        self,
        controller: Any,
        selector: Any,
        api_version: str,
        kind: str,
        can_adopt: Callable[[], None],
    ) -> None:
        self.controller = controller
        self.selector = selector
        self.api_version = api_version
        self.kind = kind
        self._can_adopt = can_adopt
        self._can_adopt_once = threading.Lock()
        self._can_adopt_result: BaseException | None | bool = False  # False = not run yet

    @property
    def _uid(self) -> str:
        return meta(self.controller).get("uid", "")

    def _controller_deleting(self) -> bool:
        return bool(meta(self.controller).get("deletionTimestamp"))

    def can_adopt(self) -> None:
        """Run the adoption pre-check once per manager; raise its error every time."""
        with self._can_adopt_once:
            if self._can_adopt_result is False:
                try:
                    self._can_adopt()
                    self._can_adopt_result = None
                except Exception as err:  # remembered and re-raised for every adoption
                    self._can_adopt_result = err
            if self._can_adopt_result is not None:
                raise self._can_adopt_result

    def claim_object(
        self,
        obj: dict,
        match: Callable[[dict], bool],
        adopt: Callable[[dict], None],
        release: Callable[[dict], None],
    ) -> bool:
        ref = get_controller_of(obj)
        if ref is not None:
            if ref.get("uid") != self._uid:
                return False
            if match(obj):
                return True
            if self._controller_deleting():
                return False
            try:
                release(obj)
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
            adopt(obj)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        return True

    def claim(
        self,
        objects: list[dict],
        adopt: Callable[[dict], None],
        release: Callable[[dict], None],
        filters: tuple[Callable[[dict], bool], ...] = (),
    ) -> list[dict]:
        """Claim every object; raise :class:`ClaimErrors` (after trying all) if any failed."""

        def match(obj: dict) -> bool:
            return self.selector.matches(labels_of(obj)) and all(f(obj) for f in filters)

        claimed: list[dict] = []
        errors: list[BaseException] = []
        for obj in objects:
            try:
                if self.claim_object(obj, match, adopt, release):
                    claimed.append(obj)
            except Exception as err:
                errors.append(err)
        if errors:
            raise ClaimErrors(errors)
        return claimed

    def adopt_patch(self, obj: dict) -> dict:
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

    def release_patch(self, obj: dict) -> dict:
        return {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": self._uid}],
                "uid": meta(obj).get("uid", ""),
            }
        }


class PodControllerRefManager(BaseControllerRefManager):
    """Claims pods through a pod control's ``patch_pod``."""

    def __init__(self, pod_control: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pod_control = pod_control

    def claim_pods(self, pods: list[dict], *filters: Callable[[dict], bool]) -> list[dict]:
        return self.claim(pods, self.adopt_pod, self.release_pod, filters)

    def adopt_pod(self, pod: dict) -> None:
        try:
            self.can_adopt()
        except Exception as err:
            raise RuntimeError(f"can't adopt Pod {_name(pod)}: {err}") from err
        m = meta(pod)
        self.pod_control.patch_pod(m.get("namespace", ""), m.get("name", ""), self.adopt_patch(pod))

    def release_pod(self, pod: dict) -> None:
        m = meta(pod)
        log.info("patching pod %s to remove its controllerRef to %s", _name(pod), self.kind)
        try:
            self.pod_control.patch_pod(
                m.get("namespace", ""), m.get("name", ""), self.release_patch(pod)
            )
        except Exception as err:
            # Gone, or its owner references were already changed so the patch is invalid.
            if is_not_found(err) or is_invalid(err):
                return
            raise


def _name(obj: dict) -> str:
    m = meta(obj)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"
