"""``apiserver_request_total``: per-client request counts served on ``GET /metrics``.

The real API server counts requests by verb, resource and code; we add a ``client`` label (the
User-Agent up to its first ``/``, e.g. ``tf-operator``) so that a benchmark can read how many
requests one component made without a proxy in the way. Counting is a dict update under a lock:
cheap enough to stay on for every request.
"""

from __future__ import annotations

import threading
from collections import Counter

_VERB_BY_METHOD = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def client_name(user_agent: str) -> str:
    """The part of a User-Agent before the first ``/`` (what kubectl calls the field manager)."""
    return user_agent.split("/", 1)[0].strip() or "unknown"


def classify(method: str, path: str, query: dict[str, str]) -> tuple[str, str]:
    """The Kubernetes ``(verb, resource)`` of a request; ``resource`` keeps a subresource
    as ``pods/status``. Non-resource paths give the lower-case method and an empty resource."""
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        rest = parts[3:]
    else:
        return method.lower(), ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    if not rest:
        return method.lower(), ""
    resource = rest[0] + (f"/{rest[2]}" if len(rest) >= 3 else "")
    named = len(rest) >= 2
    if method == "GET":
        if query.get("watch", "").lower() in ("true", "1", "t"):
            return "watch", resource
        return ("get" if named else "list"), resource
    if method == "DELETE":
        return ("delete" if named else "deletecollection"), resource
    return _VERB_BY_METHOD.get(method, method.lower()), resource


class RequestMetrics:
    """A thread-safe counter of ``(client, verb, resource, code)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str, int]] = Counter()

    def observe(
        self, user_agent: str, method: str, path: str, query: dict[str, str], code: int
    ) -> None:
        verb, resource = classify(method, path, query)
        key = (client_name(user_agent), verb, resource, code)
        with self._lock:
            self._counts[key] += 1

    def snapshot(self) -> dict[tuple[str, str, str, int], int]:
        with self._lock:
            return dict(self._counts)

    def render(self) -> bytes:
        """The Prometheus text exposition of the counter."""
        lines = [
            "# HELP apiserver_request_total Requests served, by client, verb, resource and code.",
            "# TYPE apiserver_request_total counter",
        ]
        for (client, verb, resource, code), value in sorted(self.snapshot().items()):
            labels = f'client="{_escape(client)}",code="{code}",resource="{resource}",verb="{verb}"'
            lines.append(f"apiserver_request_total{{{labels}}} {value}")
        return ("\n".join(lines) + "\n").encode()


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
