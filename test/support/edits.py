"""Read-modify-write of an object, retried on 409 Conflict as client-go's ``RetryOnConflict``
does: a test's full update of a job races the operator's status writes, as any user's would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.errors import StatusError

ATTEMPTS = 5


def edit(
    client: Any,
    gvr: tuple[str, str, str],
    namespace: str | None,
    name: str,
    change: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Get the object, ``change`` it in place, put it back; on a conflict start again from a
    fresh read. The stored object."""
    attempt = 1
    while True:
        live: dict[str, Any] = client.get(gvr, namespace, name)
        change(live)
        try:
            stored: dict[str, Any] = client.update(gvr, namespace, name, live)
            return stored
        except StatusError as err:
            if err.code != 409 or attempt == ATTEMPTS:
                raise
        attempt += 1
