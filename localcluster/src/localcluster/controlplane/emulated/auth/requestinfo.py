"""The authorization attributes of an HTTP request, as kube-apiserver's RequestInfoFactory
derives them.

Resource requests are ``/api/v1/...`` and ``/apis/<group>/<version>/...`` with at least a
resource after the version; everything else (discovery, ``/version``, ``/healthz``,
``/metrics``, the fault endpoint) is a non-resource request whose verb is the lower-case HTTP
method. Verbs of resource requests: GET gives ``get``/``list``/``watch``, POST ``create``, PUT
``update``, PATCH ``patch``, DELETE ``delete``/``deletecollection``. A list or watch whose field
selector pins ``metadata.name`` carries that name, so a rule with ``resourceNames`` can allow
``kubectl get -w`` of one object. ``/api/v1/namespaces/<ns>`` names the namespace both as the
object and as the namespace of the request, as upstream does.
"""

from __future__ import annotations

from dataclasses import dataclass

_NAMESPACE_SUBRESOURCES = {"status", "finalize"}
_TRUE = {"true", "1", "t"}


@dataclass(frozen=True)
class RequestAttributes:
    verb: str
    path: str = ""
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def combined_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _non_resource(method: str, path: str) -> RequestAttributes:
    return RequestAttributes(verb=method.lower(), path=path)


def _name_from_field_selector(selector: str) -> str:
    for term in selector.split(","):
        if "!=" in term:
            continue
        key, _, value = term.partition("=")
        if key.strip() == "metadata.name":
            return value.lstrip("=").strip()
    return ""


def request_attributes(method: str, path: str, query: dict[str, str]) -> RequestAttributes:
    """The attributes RBAC checks for ``method path?query`` (see module docstring)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return _non_resource(method, path)
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
        if not rest:
            return _non_resource(method, path)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    verb = _verb(method, bool(name), watch_path or query.get("watch", "").lower() in _TRUE)
    if verb in ("list", "watch") and not name:
        name = _name_from_field_selector(query.get("fieldSelector", ""))
    return RequestAttributes(
        verb=verb,
        path=path,
        resource_request=True,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


def _verb(method: str, named: bool, watch: bool) -> str:
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if named else "list"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())
