"""SharedInformerFactory (client-go's ``informers.SharedInformerFactory``)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from tf_operator.k8s.cache.listwatch import ListWatch
from tf_operator.k8s.cache.reflector import MIN_WATCH_TIMEOUT
from tf_operator.k8s.cache.shared_informer import SharedIndexInformer, wait_for_cache_sync
from tf_operator.k8s.client.resource import (
    CONFIGMAPS,
    ENDPOINTS,
    EVENTS,
    NAMESPACES,
    NODES,
    PODS,
    SERVICES,
    Resource,
)
from tf_operator.k8s.clock import Clock
from tf_operator.k8s.listers import Lister

log = logging.getLogger(__name__)


class SharedInformerFactory:
    def __init__(
        self,
        kube_client: Any,
        resync_period: float,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        clock: Clock | None = None,
    ) -> None:
        self.kube_client = kube_client
        self.resync_period = resync_period
        self.namespace = namespace or None
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.min_watch_timeout = min_watch_timeout
        self.clock = clock
        self._lock = threading.Lock()
        self._informers: dict[Resource, SharedIndexInformer] = {}
        self._started: set[Resource] = set()
        self._threads: list[threading.Thread] = []

    def for_resource(self, resource: Resource) -> SharedIndexInformer:
        """The factory's informer for ``resource`` (created on first request)."""
        with self._lock:
            informer = self._informers.get(resource)
            if informer is None:
                informer = self._informers[resource] = self._new_informer(resource)
            return informer

    def _new_informer(self, resource: Resource) -> SharedIndexInformer:
        namespace = self.namespace if resource.namespaced else None
        lw = ListWatch(
            self.kube_client.resource(resource),
            namespace,
            self.label_selector,
            self.field_selector,
        )
        return SharedIndexInformer(
            lw,
            self.resync_period,
            name=f"{resource.plural}{'/' + namespace if namespace else ''}",
            expected_kind=resource.kind,
            expected_api_version=resource.api_version,
            clock=self.clock,
            min_watch_timeout=self.min_watch_timeout,
        )

    def lister(self, resource: Resource) -> Lister:
        return Lister(self.for_resource(resource).get_indexer())

    def pods(self) -> SharedIndexInformer:
        return self.for_resource(PODS)

    def services(self) -> SharedIndexInformer:
        return self.for_resource(SERVICES)

    def endpoints(self) -> SharedIndexInformer:
        return self.for_resource(ENDPOINTS)

    def config_maps(self) -> SharedIndexInformer:
        return self.for_resource(CONFIGMAPS)

    def events(self) -> SharedIndexInformer:
        return self.for_resource(EVENTS)

    def nodes(self) -> SharedIndexInformer:
        return self.for_resource(NODES)

    def namespaces(self) -> SharedIndexInformer:
        return self.for_resource(NAMESPACES)

    def start(self, stop_event: threading.Event) -> None:
        """Run every requested, not yet started informer in a daemon thread."""
        with self._lock:
            for resource, informer in self._informers.items():
                if resource in self._started:
                    continue
                thread = threading.Thread(
                    target=informer.run,
                    args=(stop_event,),
                    name=f"informer {informer.name}",
                    daemon=True,
                )
                thread.start()
                self._threads.append(thread)
                self._started.add(resource)

    def wait_for_cache_sync(
        self, stop_event: threading.Event, timeout: float | None = None
    ) -> dict[Resource, bool]:
        """Wait for every started informer; the result says which synced."""
        with self._lock:
            informers = {r: self._informers[r] for r in self._started}
        wait_for_cache_sync(
            stop_event, *(i.has_synced for i in informers.values()), timeout=timeout
        )
        return {r: i.has_synced() for r, i in informers.items()}

    def join(self, timeout: float | None = None) -> None:
        """Wait for the informer threads to finish (after the stop event was set)."""
        for thread in list(self._threads):
            thread.join(timeout)
