"""Cluster DNS for process pods, without a DNS server: per-pod hosts files.

``ClusterHosts`` watches Services and Pods and keeps, for every service,
the names a pod may use (``<svc>.<ns>.svc``, ``<svc>.<ns>.svc.<domain>`` for
each configured domain, ``<svc>.<ns>``, and bare ``<svc>`` inside the same
namespace; for headless services also ``<hostname>.<svc>.<ns>.svc...`` per
address) mapped to the IPs of the pods its selector matches, as the endpoints
controller would list them. Headless and ClusterIP services both resolve
to pod IPs because there is no kube-proxy. Addresses not yet ready are
published too: the IP is fixed when the kubelet admits the pod, so a client
resolving early just retries its connection. The pods are matched here rather than read
from Endpoints because kube-apiserver refuses loopback addresses in Endpoints and
EndpointSlices, and every pod here has one.

Each process pod gets its own hosts file (its own name first, then the cluster
names), rewritten in place whenever services or pods change. Two ways to
make a process read it (``DNS_MODES``):

- ``mount``: start the pod's processes under ``unshare --mount --uts`` and
  bind-mount the file over ``/etc/hosts`` (needs root and mount namespaces;
  ``probe_mount_namespace`` checks once). Works for every program using the
  libc resolver, which rereads /etc/hosts on each lookup.
- ``python``: a ``sitecustomize`` on ``PYTHONPATH`` wraps ``socket`` lookups to
  consult the file named by ``LOCALCLUSTER_HOSTS_FILE``; Python programs only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.informer import PODS, SERVICES, Informer
from localcluster.kubelet.mounts import Bind, namespace_prefix

logger = logging.getLogger(__name__)

DNS_MODES = ("auto", "mount", "python", "none")
HOSTS_ENV = "LOCALCLUSTER_HOSTS_FILE"

SITECUSTOMIZE = '''\
"""localcluster resolver hook: cluster service names from a hosts file (generated)."""
import os as _os
import socket as _socket

_PATH = _os.environ.get("LOCALCLUSTER_HOSTS_FILE")
_getaddrinfo = _socket.getaddrinfo
_gethostbyname = _socket.gethostbyname
_gethostbyname_ex = _socket.gethostbyname_ex


def _lookup(host):
    if not _PATH or not isinstance(host, str):
        return None
    name = host.rstrip(".").lower()
    try:
        with open(_PATH) as handle:
            for line in handle:
                parts = line.split("#", 1)[0].split()
                if len(parts) > 1 and name in (p.lower() for p in parts[1:]):
                    return parts[0]
    except OSError:
        return None
    return None


def getaddrinfo(host, *args, **kwargs):
    return _getaddrinfo(_lookup(host) or host, *args, **kwargs)


def gethostbyname(host):
    return _lookup(host) or _gethostbyname(host)


def gethostbyname_ex(host):
    address = _lookup(host)
    return (host, [], [address]) if address else _gethostbyname_ex(host)


_socket.getaddrinfo = getaddrinfo
_socket.gethostbyname = gethostbyname
_socket.gethostbyname_ex = gethostbyname_ex
'''


_probe_lock = threading.Lock()
_probe_result: bool | None = None


def probe_mount_namespace() -> bool:
    """True when ``unshare --mount --uts`` plus a bind mount over /etc/hosts works here."""
    global _probe_result
    with _probe_lock:
        if _probe_result is not None:
            return _probe_result
        with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as handle:
            handle.write("127.9.9.9 localcluster-probe\n")
        try:
            result = subprocess.run(
                [*mount_prefix(handle.name, "probe"), "getent", "hosts", "localcluster-probe"],
                capture_output=True,
                timeout=10,
                check=False,
            )
            _probe_result = result.returncode == 0 and b"127.9.9.9" in result.stdout
        except (OSError, subprocess.SubprocessError):
            _probe_result = False
        finally:
            os.unlink(handle.name)
        logger.info("mount-namespace DNS %s", "available" if _probe_result else "unavailable")
        return _probe_result


def hosts_bind(hosts_file: str) -> Bind:
    return Bind(hosts_file, "/etc/hosts")


def mount_prefix(hosts_file: str, hostname: str) -> list[str]:
    return namespace_prefix([hosts_bind(hosts_file)], hostname)


def resolve_mode(mode: str) -> str:
    if mode not in DNS_MODES:
        raise ValueError(f"dns mode must be one of {DNS_MODES}")
    if mode == "auto":
        return "mount" if probe_mount_namespace() else "python"
    return mode


def service_names(service: str, namespace: str, domains: tuple[str, ...]) -> list[str]:
    base = f"{service}.{namespace}.svc"
    return [base, *(f"{base}.{d}" for d in domains), f"{service}.{namespace}"]


def write_in_place(path: str, text: str) -> None:
    """Rewrite without replacing the inode, so an existing bind mount sees the new text."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


@dataclass(frozen=True)
class PodAddress:
    """What a pod contributes to the names of the services selecting it."""

    ip: str
    labels: dict[str, str]
    hostname: str
    subdomain: str

    def selected_by(self, selector: dict[str, str]) -> bool:
        return all(self.labels.get(k) == v for k, v in selector.items())


class ClusterHosts:
    """Service names -> pod IPs from Services and the pods they select, written into per-pod
    hosts files."""

    def __init__(
        self, client: ClusterClient, directory: str, domains: tuple[str, ...] = ("cluster.local",)
    ) -> None:
        self._directory = directory
        self._domains = domains
        self._lock = threading.Condition()
        self._services: dict[tuple[str, str], dict[str, Any]] = {}
        # every pod's address as the endpoints controller would publish it (see _on_pod)
        self._addresses: dict[tuple[str, str], PodAddress] = {}
        self._pods: dict[str, tuple[Any, ...]] = {}  # key -> (path, ns, ip, own names, labels)
        self._dirty = False
        self._written: dict[str, str] = {}
        self._svc_informer = Informer(client, SERVICES, self._on_service)
        self._pod_informer = Informer(client, PODS, self._on_pod)
        os.makedirs(directory, exist_ok=True)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        writer = threading.Thread(
            target=self._run, args=(stop_event,), name="cluster-hosts", daemon=True
        )
        writer.start()
        return [self._svc_informer.start(stop_event), self._pod_informer.start(stop_event), writer]

    def _on_service(
        self, event_type: str, obj: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        self._update(self._services, event_type, obj)

    def _on_pod(self, event_type: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
        key = (meta.get("namespace", ""), meta["name"])
        address = PodAddress(
            ip=status.get("podIP") or "",
            labels=dict(meta.get("labels") or {}),
            hostname=spec.get("hostname") or "",
            subdomain=spec.get("subdomain") or "",
        )
        # as the endpoints controller: no address for a pod that finished or is going away
        gone = (
            event_type == "DELETED"
            or not address.ip
            or status.get("phase") in ("Succeeded", "Failed")
            or bool(meta.get("deletionTimestamp"))
        )
        with self._lock:
            if gone:
                if self._addresses.pop(key, None) is None:
                    return
            elif self._addresses.get(key) == address:
                return
            else:
                self._addresses[key] = address
            self._dirty = True
            self._lock.notify_all()

    def _update(
        self, table: dict[tuple[str, str], dict[str, Any]], event_type: str, obj: dict[str, Any]
    ) -> None:
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        with self._lock:
            if event_type == "DELETED":
                table.pop(key, None)
            else:
                table[key] = obj
            self._dirty = True
            self._lock.notify_all()

    def add_pod(
        self,
        key: str,
        namespace: str,
        pod_ip: str,
        own_names: str,
        labels: dict[str, str] | None = None,
    ) -> str:
        """Create the pod's hosts file now (so it exists before the process) and return its path.

        Services selecting the pod's ``labels`` resolve to the pod's own IP in its
        own file at once, before Endpoints catch up, so a process can bind to the
        address of its own service name (as TensorFlow servers do with TF_CONFIG).
        """
        path = os.path.join(self._directory, key.replace("/", "_") + ".hosts")
        with self._lock:
            self._pods[key] = (path, namespace, pod_ip, own_names, dict(labels or {}))
            text = self._render(namespace, pod_ip, own_names, labels or {})
        write_in_place(path, text)
        with self._lock:
            self._written[path] = text
        return path

    def remove_pod(self, key: str) -> None:
        with self._lock:
            entry = self._pods.pop(key, None)
            if entry:
                self._written.pop(entry[0], None)
        if entry:
            with contextlib.suppress(OSError):
                os.unlink(entry[0])

    def entries(self) -> list[tuple[str, str, str]]:
        """(namespace, name, ip) for every cluster name, in a stable order."""
        with self._lock:
            return self._entries()

    def _entries(self) -> list[tuple[str, str, str]]:
        out = []
        for (namespace, name), service in sorted(self._services.items()):
            spec = service.get("spec") or {}
            selector = spec.get("selector")
            if not selector:
                continue  # a service without a selector has no pods' endpoints
            headless = spec.get("clusterIP") == "None"
            for (pod_namespace, _), address in sorted(self._addresses.items()):
                if pod_namespace != namespace or not address.selected_by(selector):
                    continue
                for full in service_names(name, namespace, self._domains):
                    out.append((namespace, full, address.ip))
                out.append((namespace, name, address.ip))
                if headless and address.hostname and address.subdomain == name:
                    for full in service_names(name, namespace, self._domains):
                        out.append((namespace, f"{address.hostname}.{full}", address.ip))
        return out

    def _own_service_names(self, namespace: str, labels: dict[str, str]) -> list[str]:
        names = []
        for (service_ns, name), service in sorted(self._services.items()):
            selector = (service.get("spec") or {}).get("selector")
            if (
                service_ns == namespace
                and selector
                and all(labels.get(k) == v for k, v in selector.items())
            ):
                names += [*service_names(name, namespace, self._domains), name]
        return names

    def _render(
        self,
        namespace: str,
        pod_ip: str,
        own_names: str,
        labels: dict[str, str],
        entries: list[tuple[str, str, str]] | None = None,
    ) -> str:
        lines = [
            "# generated by tf-operator localcluster",
            "127.0.0.1\tlocalhost",
            "::1\tlocalhost ip6-localhost ip6-loopback",
            f"{pod_ip}\t{own_names}",
        ]
        seen = set()
        for name in self._own_service_names(namespace, labels):
            if name not in seen:
                seen.add(name)
                lines.append(f"{pod_ip}\t{name}")
        for entry_ns, name, ip in self._entries() if entries is None else entries:
            if "." not in name and entry_ns != namespace:
                continue  # a bare service name only resolves in its own namespace
            if name not in seen:
                seen.add(name)
                lines.append(f"{ip}\t{name}")
        return "\n".join(lines) + "\n"

    def _run(self, stop_event: threading.Event) -> None:
        while not stop_event.is_set():
            with self._lock:
                if not self._dirty:
                    self._lock.wait(0.5)
                    continue
                self._dirty = False
                entries = self._entries()
                pending = [
                    (path, self._render(ns, ip, names, labels, entries))
                    for path, ns, ip, names, labels in self._pods.values()
                ]
            for path, text in pending:
                self._write(path, text)

    def _write(self, path: str, text: str) -> None:
        with self._lock:
            if self._written.get(path) == text or not any(
                entry[0] == path for entry in self._pods.values()
            ):
                return  # unchanged, or the pod went away meanwhile
            try:
                write_in_place(path, text)
                self._written[path] = text
            except OSError as err:
                logger.warning("could not write %s: %s", path, err)
