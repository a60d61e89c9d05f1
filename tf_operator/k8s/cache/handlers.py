"""Resource event handlers: what informers call when the cache changes.

``on_update(old, new)`` is also called on a periodic resync with ``old is new``
(nothing changed; the object is re-delivered so controllers re-check it).
``on_delete`` may receive a :class:`DeletedFinalStateUnknown` tombstone
instead of an object; every delete handler must cope with both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ResourceEventHandler:
    """Override any of the three; the defaults do nothing."""

    def on_add(self, obj: Any) -> None:
        pass

    def on_update(self, old: Any, new: Any) -> None:
        pass

    def on_delete(self, obj: Any) -> None:
        pass


class ResourceEventHandlerFuncs(ResourceEventHandler):
    """A handler from up to three plain functions."""

    def __init__(
        self,
        add: Callable[[Any], None] | None = None,
        update: Callable[[Any, Any], None] | None = None,
        delete: Callable[[Any], None] | None = None,
    ) -> None:
        self._add = add
        self._update = update
        self._delete = delete

    def on_add(self, obj: Any) -> None:
        if self._add is not None:
            self._add(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self._update is not None:
            self._update(old, new)

    def on_delete(self, obj: Any) -> None:
        if self._delete is not None:
            self._delete(obj)


class FilteringResourceEventHandler(ResourceEventHandler):
    """Pass on only objects accepted by ``filter_func``.

    An update that makes an object start (stop) passing the filter arrives as
    an add (a delete), as client-go does.
    """

    def __init__(self, filter_func: Callable[[Any], bool], handler: ResourceEventHandler) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj)

    def on_update(self, old: Any, new: Any) -> None:
        was, now = self.filter_func(old), self.filter_func(new)
        if was and now:
            self.handler.on_update(old, new)
        elif now:
            self.handler.on_add(new)
        elif was:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)
