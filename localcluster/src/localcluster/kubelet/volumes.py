"""Pod volumes for process pods: files on the host, bind-mounted where the pod expects them.

Each volume of a pod becomes a directory under ``<pod dir>/volumes/<name>``: ``projected``
(service-account token, ConfigMap, Secret and downward-API sources), ``configMap``, ``secret``,
``downwardAPI`` and ``emptyDir``; a ``hostPath`` is used in place. Files are written
atomically (temporary file, then rename), as the kubelet's atomic writer does, so a reader never
sees half a token. A service-account token is requested through the TokenRequest API, bound to
the pod, and rewritten once 80% of its lifetime has passed, like the kubelet's token manager.

A container's ``volumeMounts`` become read-only or read-write bind mounts inside the pod's
private mount namespace (``mounts``), which also makes the targets that do not exist on the host
(the standard ``/var/run/secrets/kubernetes.io/serviceaccount`` among them) for the pod only:
nothing outside the cluster's state directory is created.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shutil
import tempfile
import threading
from typing import Any

from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import ClusterClient
from localcluster.kubelet.env import CONFIGMAPS, SECRETS, ContainerConfigError, field_value
from localcluster.kubelet.mounts import Bind
from localcluster.kubelet.podstatus import PodRecord
from localcluster.kubelet.timers import TimerHandle, TimerQueue

logger = logging.getLogger(__name__)

TOKEN_REFRESH_FRACTION = 0.8
DEFAULT_MODE = 0o644


class VolumeError(ContainerConfigError):
    """A volume cannot be set up (yet): the pod waits in ContainerCreating and it is retried."""


def _write(directory: str, relative: str, data: bytes, mode: int) -> None:
    path = os.path.join(directory, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _object_files(
    client: ClusterClient, gvr: GVR, namespace: str, source: dict[str, Any]
) -> dict[str, bytes]:
    """Files of a ConfigMap or Secret source: every key, or the ``items`` it lists."""
    name = source.get("name") or source.get("secretName") or ""
    kind = "configmap" if gvr == CONFIGMAPS else "secret"
    try:
        obj = client.get(gvr, namespace, name)
    except Exception as err:  # noqa: BLE001
        if source.get("optional"):
            return {}
        raise VolumeError(f'{kind} "{name}" not found') from err
    if gvr == SECRETS:
        data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    else:
        data = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
        data |= {k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()}
    items = source.get("items")
    if not items:
        return data
    files = {}
    for item in items:
        if item.get("key") not in data:
            if source.get("optional"):
                continue
            raise VolumeError(f'{kind} "{name}": key "{item.get("key")}" not found')
        files[item.get("path") or item["key"]] = data[item["key"]]
    return files


def _downward_files(record: PodRecord, items: list[dict[str, Any]]) -> dict[str, bytes]:
    meta = record.pod.get("metadata") or {}
    files = {}
    for item in items:
        path = (item.get("fieldRef") or {}).get("fieldPath", "")
        if path in ("metadata.labels", "metadata.annotations"):
            values = meta.get(path.split(".")[1]) or {}
            text = "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
        else:
            text = field_value(record, path)
        files[item["path"]] = text.encode()
    return files


class PodVolumes:
    """Sets up, refreshes and removes the volumes of the pods on one node."""

    def __init__(self, client: ClusterClient, timers: TimerQueue) -> None:
        self._client = client
        self._timers = timers
        self._lock = threading.Lock()
        self._dirs: dict[str, dict[str, str]] = {}  # pod key -> volume name -> directory
        self._refresh: dict[str, list[TimerHandle]] = {}

    def setup(self, record: PodRecord, pod_dir: str) -> dict[str, str]:
        """The pod's volume directories, created on the first call (raises ``VolumeError``)."""
        with self._lock:
            done = self._dirs.get(record.key)
        if done is not None:
            return done
        dirs: dict[str, str] = {}
        handles: list[TimerHandle] = []
        for volume in (record.pod.get("spec") or {}).get("volumes") or []:
            directory = self._volume(record, pod_dir, volume, handles)
            if directory is not None:
                dirs[volume["name"]] = directory
        with self._lock:
            self._dirs[record.key] = dirs
            self._refresh[record.key] = handles
        return dirs

    def teardown(self, record: PodRecord) -> None:
        with self._lock:
            self._dirs.pop(record.key, None)
            handles = self._refresh.pop(record.key, [])
        for handle in handles:
            handle.cancel()

    def _volume(
        self, record: PodRecord, pod_dir: str, volume: dict[str, Any], handles: list[TimerHandle]
    ) -> str | None:
        if "hostPath" in volume:
            return (volume["hostPath"] or {}).get("path")
        directory = os.path.join(pod_dir, "volumes", volume["name"])
        ns = record.namespace
        if "projected" in volume:
            projected = volume["projected"] or {}
            mode = int(projected.get("defaultMode") or DEFAULT_MODE)
            for source in projected.get("sources") or []:
                if "serviceAccountToken" in source:
                    token = source["serviceAccountToken"]
                    handles.append(self._write_token(record, directory, token, mode))
                elif "configMap" in source:
                    self._write_all(
                        directory,
                        _object_files(self._client, CONFIGMAPS, ns, source["configMap"]),
                        mode,
                    )
                elif "secret" in source:
                    self._write_all(
                        directory,
                        _object_files(self._client, SECRETS, ns, source["secret"]),
                        mode,
                    )
                elif "downwardAPI" in source:
                    items = (source["downwardAPI"] or {}).get("items") or []
                    self._write_all(directory, _downward_files(record, items), mode)
        elif "configMap" in volume:
            source = volume["configMap"] or {}
            files = _object_files(self._client, CONFIGMAPS, ns, source)
            self._write_all(directory, files, int(source.get("defaultMode") or DEFAULT_MODE))
        elif "secret" in volume:
            source = volume["secret"] or {}
            files = _object_files(self._client, SECRETS, ns, source)
            self._write_all(directory, files, int(source.get("defaultMode") or DEFAULT_MODE))
        elif "downwardAPI" in volume:
            source = volume["downwardAPI"] or {}
            files = _downward_files(record, source.get("items") or [])
            self._write_all(directory, files, int(source.get("defaultMode") or DEFAULT_MODE))
        elif "emptyDir" in volume:
            os.makedirs(directory, exist_ok=True)
        else:
            logger.warning(
                "pod %s: volume %s has an unsupported type", record.key, volume.get("name")
            )
            return None
        return directory

    def _write_all(self, directory: str, files: dict[str, bytes], mode: int) -> None:
        os.makedirs(directory, exist_ok=True)
        for relative, data in files.items():
            _write(directory, relative, data, mode)

    def _write_token(
        self, record: PodRecord, directory: str, source: dict[str, Any], mode: int
    ) -> TimerHandle:
        account = (record.pod.get("spec") or {}).get("serviceAccountName") or "default"
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "audiences": [source["audience"]] if source.get("audience") else [],
                "expirationSeconds": int(source.get("expirationSeconds") or 3600),
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": record.name,
                    "uid": record.uid,
                },
            },
        }
        try:
            answer = self._client.create_token(record.namespace, account, body)
        except Exception as err:  # noqa: BLE001 - the API said no: retried like a mount
            raise VolumeError(f"failed to fetch token: {err}") from err
        _write(directory, source.get("path") or "token", answer["status"]["token"].encode(), mode)
        seconds = answer["spec"]["expirationSeconds"] * TOKEN_REFRESH_FRACTION

        def refresh() -> None:
            with self._lock:
                handles = self._refresh.get(record.key)
            if handles is None:
                return  # the pod is gone
            try:
                handles.append(self._write_token(record, directory, source, mode))
            except VolumeError as err:
                logger.warning("refreshing the token of %s failed: %s", record.key, err)

        return self._timers.call_later(seconds, refresh)

    # -- mounts -----------------------------------------------------------------------

    def binds(self, record: PodRecord, spec: dict[str, Any], dirs: dict[str, str]) -> list[Bind]:
        """Bind mounts for a container's ``volumeMounts`` (see module docstring)."""
        out = []
        for mount in spec.get("volumeMounts") or []:
            source = dirs.get(mount.get("name"))
            target = mount.get("mountPath") or ""
            if source is None or not target:
                continue
            if mount.get("subPath"):
                source = os.path.join(source, mount["subPath"])
            out.append(Bind(source, target, bool(mount.get("readOnly"))))
        return out


def remove_volumes(pod_dir: str) -> None:
    shutil.rmtree(os.path.join(pod_dir, "volumes"), ignore_errors=True)
