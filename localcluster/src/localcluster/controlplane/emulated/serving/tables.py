"""``meta.k8s.io/v1 Table`` rendering for ``kubectl get`` (list, get and watch).

Each kind has a column list with a cell function; custom resources use their CRD's
``additionalPrinterColumns`` (simple JSONPath: ``.a.b``, ``.a[0].b``, ``.a[-1:].b``). Columns
with priority 1 appear only with ``-o wide``. Ages are rendered the way kubectl renders them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from localcluster.apimachinery.jsonpath import json_path
from localcluster.apimachinery.objects import meta, parse_time
from localcluster.controlplane.emulated import crds
from localcluster.controlplane.emulated.resources import ResourceType

Cell = Callable[[dict[str, Any]], Any]
TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def human_duration(seconds: float) -> str:
    s = int(max(0, seconds))
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if d < 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if d < 365 * 2:
        return f"{d}d"
    return f"{d // 365}y{d % 365}d"


def _age_of(value: Any) -> str:
    t = parse_time(value) if isinstance(value, str) else None
    return "<unknown>" if t is None else human_duration(time.time() - t)


def _age(obj: dict[str, Any]) -> str:
    return _age_of(meta(obj).get("creationTimestamp"))


def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(p)
    return default if obj is None else obj


def _pod_ready(p: dict[str, Any]) -> str:
    statuses = _get(p, "status", "containerStatuses", default=[])
    total = len(_get(p, "spec", "containers", default=[]))
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_status(p: dict[str, Any]) -> str:
    if meta(p).get("deletionTimestamp"):
        return "Terminating"
    reason = _get(p, "status", "reason")
    for s in _get(p, "status", "containerStatuses", default=[]):
        waiting = _get(s, "state", "waiting", "reason")
        terminated = _get(s, "state", "terminated", "reason")
        if waiting or terminated:
            reason = waiting or terminated
    return cast(str, reason or _get(p, "status", "phase", default="Unknown"))


def _restarts(p: dict[str, Any]) -> str:
    """``3 (42s ago)``: the restart count and, once restarted, how long ago the last ended."""
    statuses = _get(p, "status", "containerStatuses", default=[])
    count = sum(s.get("restartCount", 0) for s in statuses)
    finished = [
        t
        for s in statuses
        if (t := parse_time(_get(s, "lastState", "terminated", "finishedAt", default="")))
    ]
    if not count or not finished:
        return str(count)
    return f"{count} ({human_duration(time.time() - max(finished))} ago)"


def _svc_ports(s: dict[str, Any]) -> str:
    ports = _get(s, "spec", "ports", default=[])
    parts = []
    for p in ports:
        text = str(p.get("port"))
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        parts.append(f"{text}/{p.get('protocol', 'TCP')}")
    return ",".join(parts) or "<none>"


def _selector(d: dict[str, Any] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in (d or {}).items()) or "<none>"


def _node_status(n: dict[str, Any]) -> str:
    ready = next(
        (c for c in _get(n, "status", "conditions", default=[]) if c.get("type") == "Ready"), None
    )
    status = (
        "Ready" if ready and ready.get("status") == "True" else "NotReady" if ready else "Unknown"
    )
    if _get(n, "spec", "unschedulable"):
        status += ",SchedulingDisabled"
    return status


def _node_roles(n: dict[str, Any]) -> str:
    roles = [
        k.split("/", 1)[1]
        for k in (meta(n).get("labels") or {})
        if k.startswith("node-role.kubernetes.io/")
    ]
    return ",".join(sorted(roles)) or "<none>"


def _node_address(n: dict[str, Any], kind: str) -> str:
    for a in _get(n, "status", "addresses", default=[]):
        if a.get("type") == kind:
            return cast(str, a.get("address", "<none>"))
    return "<none>"


def _endpoints(e: dict[str, Any]) -> str:
    out = []
    for s in e.get("subsets") or []:
        for a in s.get("addresses") or []:
            for p in s.get("ports") or [{}]:
                out.append(f"{a.get('ip')}:{p.get('port')}" if p.get("port") else a.get("ip", ""))
    text = ",".join(out[:3]) + (f" + {len(out) - 3} more..." if len(out) > 3 else "")
    return text or "<none>"


def _event_object(e: dict[str, Any]) -> str:
    io = e.get("involvedObject") or e.get("regarding") or {}
    return f"{str(io.get('kind', '')).lower()}/{io.get('name', '')}"


def _event_columns(message_field: str) -> list[tuple[dict[str, Any], Cell]]:
    """The columns both event APIs share; they name the message field differently."""
    return [
        (_col("Last Seen"), _event_last_seen),
        (_col("Type"), lambda e: e.get("type", "")),
        (_col("Reason"), lambda e: e.get("reason", "")),
        (_col("Object"), _event_object),
        (_col("Message"), lambda e: e.get(message_field, "")),
        (_col("Name", priority=1, fmt="name"), _name),
    ]


def _event_last_seen(e: dict[str, Any]) -> str:
    for f in ("lastTimestamp", "eventTime", "deprecatedLastTimestamp", "firstTimestamp"):
        if e.get(f):
            return _age_of(e[f])
    return _age(e)


def _name(o: dict[str, Any]) -> str:
    return cast(str, meta(o).get("name", ""))


def _col(name: str, typ: str = "string", priority: int = 0, fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": priority}


def _template_containers(w: dict[str, Any], field: str) -> str:
    containers = _get(w, "spec", "template", "spec", "containers", default=[])
    return ",".join(str(c.get(field, "")) for c in containers)


def _label_selector(w: dict[str, Any]) -> str:
    """``metav1.FormatLabelSelector``: matchLabels then matchExpressions, comma-joined."""
    selector = _get(w, "spec", "selector", default={}) or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, values = expr.get("operator"), ",".join(expr.get("values") or [])
        if op in ("In", "NotIn"):
            parts.append(f"{expr.get('key')} {op.lower()} ({values})")
        else:
            parts.append(expr.get("key", "") if op == "Exists" else f"!{expr.get('key')}")
    return ",".join(parts) or "<none>"


NAME = (_col("Name", fmt="name"), _name)
AGE = (_col("Age"), _age)

_WORKLOAD_WIDE: list[tuple[dict[str, Any], Cell]] = [
    (_col("Containers", priority=1), lambda w: _template_containers(w, "name")),
    (_col("Images", priority=1), lambda w: _template_containers(w, "image")),
    (_col("Selector", priority=1), _label_selector),
]

_COLUMNS: dict[tuple[str, str], list[tuple[dict[str, Any], Cell]]] = {
    ("", "pods"): [
        NAME,
        (_col("Ready"), _pod_ready),
        (_col("Status"), _pod_status),
        (_col("Restarts"), _restarts),
        AGE,
        (_col("IP", priority=1), lambda p: _get(p, "status", "podIP", default="<none>")),
        (_col("Node", priority=1), lambda p: _get(p, "spec", "nodeName", default="<none>")),
        (
            _col("Nominated Node", priority=1),
            lambda p: _get(p, "status", "nominatedNodeName", default="<none>"),
        ),
        (_col("Readiness Gates", priority=1), lambda p: "<none>"),
    ],
    ("", "services"): [
        NAME,
        (_col("Type"), lambda s: _get(s, "spec", "type", default="ClusterIP")),
        (_col("Cluster-IP"), lambda s: _get(s, "spec", "clusterIP", default="<none>")),
        (
            _col("External-IP"),
            lambda s: ",".join(_get(s, "spec", "externalIPs", default=[])) or "<none>",
        ),
        (_col("Port(s)"), _svc_ports),
        AGE,
        (_col("Selector", priority=1), lambda s: _selector(_get(s, "spec", "selector"))),
    ],
    ("", "namespaces"): [
        NAME,
        (_col("Status"), lambda n: _get(n, "status", "phase", default="")),
        AGE,
    ],
    ("", "nodes"): [
        NAME,
        (_col("Status"), _node_status),
        (_col("Roles"), _node_roles),
        AGE,
        (_col("Version"), lambda n: _get(n, "status", "nodeInfo", "kubeletVersion", default="")),
        (_col("Internal-IP", priority=1), lambda n: _node_address(n, "InternalIP")),
        (_col("External-IP", priority=1), lambda n: _node_address(n, "ExternalIP")),
        (
            _col("OS-Image", priority=1),
            lambda n: _get(n, "status", "nodeInfo", "osImage", default="<unknown>"),
        ),
        (
            _col("Kernel-Version", priority=1),
            lambda n: _get(n, "status", "nodeInfo", "kernelVersion", default="<unknown>"),
        ),
        (
            _col("Container-Runtime", priority=1),
            lambda n: _get(n, "status", "nodeInfo", "containerRuntimeVersion", default="<unknown>"),
        ),
    ],
    ("", "configmaps"): [
        NAME,
        (
            _col("Data", "integer"),
            lambda c: len(c.get("data") or {}) + len(c.get("binaryData") or {}),
        ),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        (_col("Type"), lambda s: s.get("type", "Opaque")),
        (_col("Data", "integer"), lambda s: len(s.get("data") or {})),
        AGE,
    ],
    ("", "serviceaccounts"): [
        NAME,
        (_col("Secrets", "integer"), lambda s: len(s.get("secrets") or [])),
        AGE,
    ],
    ("", "endpoints"): [NAME, (_col("Endpoints"), _endpoints), AGE],
    ("", "persistentvolumeclaims"): [
        NAME,
        (_col("Status"), lambda c: _get(c, "status", "phase", default="Pending")),
        (_col("Volume"), lambda c: _get(c, "spec", "volumeName", default="")),
        (_col("Capacity"), lambda c: _get(c, "status", "capacity", "storage", default="")),
        (_col("Access Modes"), lambda c: ",".join(_get(c, "spec", "accessModes", default=[]))),
        (_col("StorageClass"), lambda c: _get(c, "spec", "storageClassName", default="<unset>")),
        AGE,
    ],
    ("", "events"): [
        *_event_columns("message"),
        (_col("Count", "integer", priority=1), lambda e: e.get("count", 1)),
    ],
    ("events.k8s.io", "events"): _event_columns("note"),
    ("coordination.k8s.io", "leases"): [
        NAME,
        (_col("Holder"), lambda lease: _get(lease, "spec", "holderIdentity", default="")),
        AGE,
    ],
    ("apps", "deployments"): [
        NAME,
        (
            _col("Ready"),
            lambda d: (
                f"{_get(d, 'status', 'readyReplicas', default=0)}/{_get(d, 'spec', 'replicas', default=1)}"
            ),
        ),
        (_col("Up-to-date", "integer"), lambda d: _get(d, "status", "updatedReplicas", default=0)),
        (_col("Available", "integer"), lambda d: _get(d, "status", "availableReplicas", default=0)),
        AGE,
        *_WORKLOAD_WIDE,
    ],
    ("apps", "replicasets"): [
        NAME,
        (_col("Desired", "integer"), lambda d: _get(d, "spec", "replicas", default=1)),
        (_col("Current", "integer"), lambda d: _get(d, "status", "replicas", default=0)),
        (_col("Ready", "integer"), lambda d: _get(d, "status", "readyReplicas", default=0)),
        AGE,
        *_WORKLOAD_WIDE,
    ],
    ("apps", "statefulsets"): [
        NAME,
        (
            _col("Ready"),
            lambda d: (
                f"{_get(d, 'status', 'readyReplicas', default=0)}/{_get(d, 'spec', 'replicas', default=1)}"
            ),
        ),
        AGE,
    ],
    ("policy", "poddisruptionbudgets"): [
        NAME,
        (_col("Min Available"), lambda p: str(_get(p, "spec", "minAvailable", default="N/A"))),
        (_col("Max Unavailable"), lambda p: str(_get(p, "spec", "maxUnavailable", default="N/A"))),
        (
            _col("Allowed Disruptions", "integer"),
            lambda p: _get(p, "status", "disruptionsAllowed", default=0),
        ),
        AGE,
    ],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [
        NAME,
        (_col("Created At", "date"), lambda c: meta(c).get("creationTimestamp", "")),
    ],
}


def _crd_columns(rt: ResourceType, version: str) -> list[tuple[dict[str, Any], Cell]]:
    columns = crds.printer_columns(rt.crd or {}, version)
    if not columns:
        return [NAME, AGE]
    out: list[tuple[dict[str, Any], Cell]] = [NAME]
    for c in columns:
        typ = c.get("type", "string")
        col = _col(c.get("name", ""), typ, int(c.get("priority", 0)), c.get("format", ""))
        col["description"] = c.get("description", c.get("name", ""))

        def cell(o: dict[str, Any], path: str = c.get("jsonPath", ""), typ: str = typ) -> Any:
            v = json_path(o, path)
            if v is None:
                return None
            return _age_of(v) if typ == "date" else v

        out.append((col, cell))
    return out


def columns_for(rt: ResourceType, version: str) -> list[tuple[dict[str, Any], Cell]]:
    if rt.is_custom:
        return _crd_columns(rt, version)
    return _COLUMNS.get(rt.storage_key, [NAME, AGE])


def _row(
    obj: dict[str, Any], cols: list[tuple[dict[str, Any], Cell]], include: str
) -> dict[str, Any]:
    cells = []
    for _, fn in cols:
        try:
            cells.append(fn(obj))
        except (AttributeError, TypeError, KeyError, ValueError):
            cells.append(None)
    row: dict[str, Any] = {"cells": cells}
    if include == "Object":
        row["object"] = obj
    elif include != "None":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta(obj),
        }
    return row


def table(
    rt: ResourceType,
    version: str,
    objs: list[dict[str, Any]],
    list_meta: dict[str, Any],
    include: str = "Metadata",
) -> dict[str, Any]:
    cols = columns_for(rt, version)
    defs = [c for c, _ in cols]
    # Creation time cells on CRDs are dates; show them as kubectl does (RFC 3339)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": defs,
        "rows": [_row(o, cols, include) for o in objs],
    }


def wants_table(accept: str) -> bool:
    return "as=Table" in accept and "g=meta.k8s.io" in accept
