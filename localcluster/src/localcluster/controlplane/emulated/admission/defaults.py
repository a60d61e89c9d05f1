"""Server-side defaulting of built-in kinds, as the real API server fills fields in.

Pods get the scheduler/restart/grace/DNS/service-link defaults, per-container pull policy,
container-port protocol and requests defaulted from limits (pods only, not pod templates, as
``SetDefaults_Pod``), and on create a fresh ``Pending`` status with their QoS class; Services get a ClusterIP (unless ``None``),
ClusterIPs, IP family fields and port defaults; Namespaces their ``kubernetes`` finalizer,
``Active`` phase and name label; Leases and Events have MicroTime fields normalised to
``...000000Z``.
"""

from __future__ import annotations

import base64
import threading
from typing import Any

from localcluster.apimachinery import gobase64
from localcluster.apimachinery.objects import normalise_micro_time
from localcluster.apimachinery.qos import qos_class

_MICRO_TIME_FIELDS: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {
    ("coordination.k8s.io", "leases"): ("spec", ("acquireTime", "renewTime")),
    ("", "events"): (None, ("eventTime",)),
    ("events.k8s.io", "events"): (None, ("eventTime",)),
}


class ClusterIPAllocator:
    """Hands out distinct service IPs from 10.96.0.0/16 (10.96.0.1 is left for ``kubernetes``)
    and node ports for NodePort/LoadBalancer services."""

    def __init__(self) -> None:
        self._next = 10
        self._next_node_port = 30000
        self._lock = threading.Lock()

    def node_port(self) -> int:
        """The next port of the NodePort range (30000-32767)."""
        with self._lock:
            port = self._next_node_port
            self._next_node_port = 30000 + (port - 30000 + 1) % 2768
        return port

    def allocate(self) -> str:
        with self._lock:
            n = self._next
            self._next += 1
        return f"10.96.{n // 250}.{n % 250 + 1}"


def apply(
    storage_key: tuple[str, str],
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    ips: ClusterIPAllocator,
) -> None:
    """Default ``obj`` (about to be stored over ``old``, None on create) in place."""
    if storage_key == ("", "pods"):
        pod_defaults(obj, old)
    elif storage_key == ("", "services"):
        service_defaults(obj, old, ips)
    elif storage_key == ("", "namespaces"):
        _namespace_defaults(obj)
    elif storage_key == ("", "secrets"):
        _secret_defaults(obj)
    elif storage_key in _MICRO_TIME_FIELDS:
        _normalise_micro_times(storage_key, obj)


def _secret_defaults(obj: dict[str, Any]) -> None:
    """``data`` is stored as Go encodes its bytes again (canonical base64: the line breaks Go's
    decoder skips are gone); ``stringData`` is written into it (over a key of the same name)
    and not kept, as the v1 to internal conversion does; the type defaults to Opaque."""
    string_data = obj.pop("stringData", None)
    data = obj.get("data")
    if isinstance(data, dict):
        obj["data"] = data = {
            k: base64.b64encode(gobase64.decode(v)).decode() if isinstance(v, str) else v
            for k, v in data.items()
        }
    if isinstance(string_data, dict) and string_data:
        data = dict(data or {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _namespace_defaults(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name


def _normalise_micro_times(storage_key: tuple[str, str], obj: dict[str, Any]) -> None:
    section, fields = _MICRO_TIME_FIELDS[storage_key]
    target = obj.get(section) if section else obj
    if not isinstance(target, dict):
        return
    for f in fields:
        if target.get(f) is not None:
            target[f] = normalise_micro_time(target[f])


def _pull_policy(image: str) -> str:
    tagged = ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")
    return "IfNotPresent" if tagged or "@" in image else "Always"


def pod_defaults(pod: dict[str, Any], old: dict[str, Any] | None) -> None:
    """``SetDefaults_Pod``: the pod spec's defaults, service links, requests defaulted from
    limits; a new pod's status."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    pod_spec_defaults(spec)
    spec.setdefault("enableServiceLinks", True)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            _requests_from_limits(c["resources"])
    if old is None:
        pod["status"] = {"phase": "Pending", "qosClass": qos_class(pod)}


def pod_spec_defaults(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and the containers' defaults (pods and pod templates)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            c.setdefault("imagePullPolicy", _pull_policy(str(c.get("image") or "")))
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
            for port in c.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _requests_from_limits(resources: Any) -> None:
    """A limit without its request sets the request (Go: for a non-nil limits map)."""
    limits = resources.get("limits") if isinstance(resources, dict) else None
    if isinstance(limits, dict) and limits:
        requests = resources.get("requests")
        if not isinstance(requests, dict):
            requests = resources["requests"] = {}
        for name, value in limits.items():
            requests.setdefault(name, value)


def service_defaults(
    svc: dict[str, Any], old: dict[str, Any] | None, ips: ClusterIPAllocator
) -> None:
    spec = svc.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    old_ip = ((old or {}).get("spec") or {}).get("clusterIP")
    if not spec.get("clusterIP"):
        spec["clusterIP"] = old_ip or ips.allocate()
    spec["clusterIPs"] = [spec["clusterIP"]]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    old_ports = {
        p.get("port"): p
        for p in ((old or {}).get("spec") or {}).get("ports") or []
        if isinstance(p, dict)
    }
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if not p.get("targetPort"):
                p["targetPort"] = p.get("port")
            if spec["type"] in ("NodePort", "LoadBalancer") and not p.get("nodePort"):
                p["nodePort"] = old_ports.get(p.get("port"), {}).get("nodePort") or ips.node_port()
    if old is None:
        svc["status"] = {"loadBalancer": {}}
