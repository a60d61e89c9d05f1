"""ListWatch: the list and watch calls of one resource, with fixed selectors.

A reflector only needs ``list(**options)`` and ``watch(**options)``; this binds
a :class:`ResourceInterface` (real or a test's) to a namespace and selectors so the
reflector never has to know which resource it mirrors. Anything with the same
two methods can stand in, which is how tests feed a reflector scripted events.
"""

from __future__ import annotations

from typing import Any

from tf_operator.k8s.client.interface import ResourceInterface, WatchInterface
from tf_operator.k8s.objects import Obj


class ListWatch:
    def __init__(
        self,
        resource_client: ResourceInterface,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
    ) -> None:
        self.resource_client = resource_client
        self.namespace = namespace or None
        self.label_selector = None if label_selector is None else str(label_selector) or None
        self.field_selector = None if field_selector is None else str(field_selector) or None

    def list(
        self,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj:
        return self.resource_client.list(
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=resource_version,
            limit=limit,
            continue_token=continue_token,
        )

    def watch(
        self,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = False,
    ) -> WatchInterface:
        return self.resource_client.watch(
            namespace=self.namespace,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            allow_bookmarks=allow_bookmarks,
        )

    def __repr__(self) -> str:
        res = getattr(self.resource_client, "resource", None)
        return f"ListWatch({res}, ns={self.namespace!r}, labels={self.label_selector!r})"
