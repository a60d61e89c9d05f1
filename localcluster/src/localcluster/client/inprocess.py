"""``InProcessClient``: the ``ClusterClient`` over the emulator's ``Registry``, in this process.

No HTTP and no serialisation: every call is the registry call an HTTP request would have made,
as the real API server's handlers call its storage. With ``shared=True`` the caller gets the
stored object itself (the registry's ``*_shared`` paths), which is what keeps many agents on
thousands of pods cheap; without it, a private copy. Watches are the registry's own ``Watch``
queues, filled while the registry commits, so draining one is a barrier (``WatchStream``).

Service-account tokens need the server's issuer, which is not the registry's: the assembly
passes ``tokens`` (the ``APIServer``'s ``auth.tokens``) when agents ask for tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.gvr import GVR
from localcluster.apimachinery.objects import clone
from localcluster.client.api import Object, Page, PatchType, ResourceInfo, WatchStream
from localcluster.controlplane.emulated.auth.tokenrequest import create_token
from localcluster.controlplane.emulated.auth.tokens import TokenIssuer
from localcluster.controlplane.emulated.registry import Registry

_PODS = ("", "v1", "pods")


class InProcessClient:
    """``ClusterClient`` over ``registry`` (see the module docstring)."""

    def __init__(
        self,
        registry: Registry,
        tokens: TokenIssuer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry
        self._tokens = tokens
        self._clock = clock

    def get(self, gvr: GVR, namespace: str | None, name: str, *, shared: bool = False) -> Object:
        obj = self.registry.get_shared(gvr, namespace, name)
        return obj if shared else clone(obj)

    def list(
        self,
        gvr: GVR,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        shared: bool = False,
    ) -> Page:
        page = self.registry.list_page(
            gvr, namespace, label_selector, field_selector, limit, continue_token
        )
        items = page.items if shared else [clone(i) for i in page.items]
        return Page(items, page.resource_version, page.continue_token)

    def watch(
        self,
        gvr: GVR,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> WatchStream:
        return self.registry.watch(gvr, namespace, resource_version, label_selector, field_selector)

    def create(
        self, gvr: GVR, namespace: str | None, obj: Object, *, shared: bool = False
    ) -> Object:
        created = self.registry.create_shared(gvr, namespace, obj)
        return created if shared else clone(created)

    def update(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        obj: Object,
        *,
        subresource: str | None = None,
        shared: bool = False,
    ) -> Object:
        updated = self.registry.update_shared(gvr, namespace, name, obj, subresource)
        return updated if shared else clone(updated)

    def patch(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType,
        *,
        subresource: str | None = None,
        shared: bool = False,
    ) -> Object:
        patched, _ = self.registry.patch_shared(
            gvr, namespace, name, patch, patch_type, subresource
        )
        return patched if shared else clone(patched)

    def delete(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
    ) -> None:
        self.registry.delete_shared(
            gvr, namespace, name, grace_period_seconds, propagation_policy, preconditions
        )

    def bind(self, namespace: str, name: str, node_name: str, *, shared: bool = False) -> Object:
        bound = self.registry.bind_pod_shared(namespace, name, node_name)
        return bound if shared else clone(bound)

    def create_token(self, namespace: str, service_account: str, token_request: Object) -> Object:
        if self._tokens is None:
            raise StatusError(
                404, "NotFound", "this client has no token issuer: serviceaccounts/token"
            )
        return create_token(
            self.registry, self._tokens, namespace, service_account, token_request, self._clock()
        )

    def resource_info(self, gvr: GVR) -> ResourceInfo:
        rt = self.registry.resolve(gvr)
        return ResourceInfo(rt.namespaced, frozenset(rt.subresources))
