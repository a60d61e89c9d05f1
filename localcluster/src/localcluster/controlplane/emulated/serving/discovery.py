"""Discovery documents (legacy and aggregated v2/v2beta1), ``/version`` and OpenAPI v3.

Everything is derived from the registry's current resource types, and cached per
``registry.types_generation`` so a CRD write shows up in the very next discovery request.
The OpenAPI v3 documents carry one item path per kind with a PATCH operation that advertises
``fieldValidation``: that is all kubectl's default ``--validate=strict`` needs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from localcluster.controlplane.emulated.crds import version_priority
from localcluster.controlplane.emulated.resources import ResourceType

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.3",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_SUB_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "log": ["get"],
    "binding": ["create"],
    "eviction": ["create"],
    "token": ["create"],
}
_SUB_KIND = {
    "log": ("", "v1", "Pod"),
    "binding": ("", "v1", "Binding"),
    "eviction": ("policy", "v1", "Eviction"),
    "scale": ("autoscaling", "v1", "Scale"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
}


def _storage_hash(rt: ResourceType) -> str:
    """One hash per resource, of its storage version, whichever version is asked for."""
    raw = f"{rt.group}/{rt.storage_version or rt.versions[0]}/{rt.plural}".encode()
    return hashlib.sha256(raw).digest()[:8].hex()


def group_versions(types: list[ResourceType]) -> dict[str, list[str]]:
    """group -> served versions in preference order."""
    out: dict[str, set[str]] = {}
    for rt in types:
        out.setdefault(rt.group, set()).update(rt.versions)
    return {g: sorted(vs, key=version_priority) for g, vs in out.items()}


def _names_and_categories(rt: ResourceType) -> dict[str, list[str]]:
    """``shortNames`` and ``categories``, each only when the type has some."""
    out: dict[str, list[str]] = {}
    if rt.short_names:
        out["shortNames"] = rt.short_names
    if rt.categories:
        out["categories"] = rt.categories
    return out


def _legacy_resource(rt: ResourceType) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.verbs,
        "storageVersionHash": _storage_hash(rt),
    }
    entry.update(_names_and_categories(rt))
    out = [entry]
    for sub in rt.subresources:
        g, v, kind = _SUB_KIND.get(sub, (None, None, rt.kind))
        sub_entry = {
            "name": f"{rt.plural}/{sub}",
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": kind,
            "verbs": _SUB_VERBS[sub],
        }
        if g is not None:
            sub_entry.update({"group": g, "version": v})
        out.append(sub_entry)
    return out


def resource_list(types: list[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    rts = [rt for rt in types if rt.group == group and version in rt.versions]
    if not rts:
        return None
    gv = f"{group}/{version}" if group else version
    resources = [e for rt in rts for e in _legacy_resource(rt)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": vs, "preferredVersion": vs[0]}


def api_group(types: list[ResourceType], group: str) -> dict[str, Any] | None:
    versions = group_versions(types).get(group)
    if not versions or not group:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(group, versions)}


def api_group_list(types: list[ResourceType]) -> dict[str, Any]:
    groups = [_api_group(g, vs) for g, vs in group_versions(types).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _aggregated_resource(rt: ResourceType, version: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": rt.verbs,
    }
    entry.update(_names_and_categories(rt))
    subs = []
    for sub in rt.subresources:
        g, v, kind = _SUB_KIND.get(sub, (rt.group, version, rt.kind))
        subs.append(
            {
                "subresource": sub,
                "responseKind": {"group": g, "version": v, "kind": kind},
                "verbs": _SUB_VERBS[sub],
            }
        )
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(types: list[ResourceType], core: bool, api_version: str) -> dict[str, Any]:
    """The APIGroupDiscoveryList for ``/api`` (core) or ``/apis`` (everything else)."""
    items = []
    for group, versions in group_versions(types).items():
        if (group == "") != core:
            continue
        vs = []
        for v in versions:
            rs = [
                _aggregated_resource(rt, v)
                for rt in types
                if rt.group == group and v in rt.versions
            ]
            vs.append({"version": v, "resources": rs, "freshness": "Current"})
        item: dict[str, Any] = {"metadata": {"name": group} if group else {}, "versions": vs}
        items.append(item)
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{api_version}",
        "metadata": {},
        "items": items,
    }


def negotiate_aggregated(accept: str) -> str | None:
    """The aggregated discovery version the client asked for first (v2 or v2beta1), if any."""
    for part in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if (
            params.get("g") == "apidiscovery.k8s.io"
            and params.get("as") == "APIGroupDiscoveryList"
            and params.get("v") in ("v2", "v2beta1")
        ):
            return params["v"]
    return None


# ----------------------------------------------------------------------------- OpenAPI v3
def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _param(name: str, where: str = "query") -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "schema": {"type": "string"},
        **({"required": True} if where == "path" else {}),
    }


def openapi_document(types: list[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    rts = [rt for rt in types if rt.group == group and version in rt.versions]
    if not rts:
        return None
    paths: dict[str, Any] = {}
    for rt in rts:
        gvk = {"group": rt.group, "version": version, "kind": rt.kind}
        base = "/" + _gv_path(group, version) + ("/namespaces/{namespace}" if rt.namespaced else "")
        path_params = [_param("name", "path")] + (
            [_param("namespace", "path")] if rt.namespaced else []
        )

        def op(
            action: str, extra: list[dict[str, Any]], gvk: dict[str, Any] = gvk
        ) -> dict[str, Any]:
            return {
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": extra,
                "responses": {"200": {"description": "OK"}},
            }

        write = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]
        paths[f"{base}/{rt.plural}/{{name}}"] = {
            "parameters": path_params,
            "get": op("get", []),
            "put": op("put", write),
            "patch": op("patch", write + [_param("force")]),
            "delete": op(
                "delete",
                [_param("dryRun"), _param("gracePeriodSeconds"), _param("propagationPolicy")],
            ),
        }
        paths[f"{base}/{rt.plural}"] = {
            "parameters": path_params[1:],
            "get": op(
                "list",
                [
                    _param("labelSelector"),
                    _param("fieldSelector"),
                    _param("limit"),
                    _param("continue"),
                    _param("watch"),
                ],
            ),
            "post": op("post", write),
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
        "paths": paths,
        "components": {"schemas": {}},
    }


def openapi_index(types: list[ResourceType]) -> dict[str, Any]:
    paths = {}
    for group, versions in group_versions(types).items():
        for v in versions:
            doc = openapi_document(types, group, v)
            digest = (
                hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
            )
            gvp = _gv_path(group, v)
            paths[gvp] = {"serverRelativeURL": f"/openapi/v3/{gvp}?hash={digest}"}
    return {"paths": paths}
