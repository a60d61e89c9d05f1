"""The registry: the Kubernetes API's write semantics over the ``Store``.

Create, update, patch, delete and pod binding behave as the real kube-apiserver does: server-set
metadata, namespace checks, per-kind defaulting and validation, CRD schemas (defaults, pruning,
validation), optimistic concurrency, no-op writes that change nothing, status subresource
isolation, generation bumps on spec changes, finalizers and deletionTimestamp, graceful pod
deletion, propagation policies (carried out by ``gc``), and CRD registration.

A ``Registry`` *has* a ``Store`` (``store``: objects, resourceVersions, history, watches), as
kube-apiserver has etcd; writing to the store directly bypasses every rule above. Most methods
take and return private copies; the ``*_shared`` ones and ``list_page``, which the HTTP layer and
hot in-process paths use, return the stored objects themselves (shared: never mutate them).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, cast

from localcluster.apimachinery import apply, errors, patches
from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.gvr import GVR
from localcluster.apimachinery.objects import clone, detach, equal, format_time, meta, strip_nulls
from localcluster.controlplane.emulated import crds, scale
from localcluster.controlplane.emulated.admission import (
    celrules,
    decoding,
    defaults,
    podgroups,
    ports,
    quota,
    schema,
    validation,
    workloads,
)
from localcluster.controlplane.emulated.resources import ResourceType
from localcluster.controlplane.emulated.storage.gc import GarbageCollector
from localcluster.controlplane.emulated.storage.paging import Key
from localcluster.controlplane.emulated.storage.store import ListPage, Store
from localcluster.controlplane.emulated.storage.watch import Event, Watch

_SEEDED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_POD = ("", "pods")
_NODE = ("", "nodes")
_NAMESPACE = ("", "namespaces")
_QUOTA = ("", "resourcequotas")
_CRD = ("apiextensions.k8s.io", "customresourcedefinitions")
_PODS: GVR = ("", "v1", "pods")
_NAMESPACES: GVR = ("", "v1", "namespaces")


def _random_suffix(n: int = 5) -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=n))


def _without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    out["metadata"] = {
        k: v for k, v in meta(obj).items() if k not in ("resourceVersion", "managedFields")
    }
    return out


def _spec_part(obj: dict[str, Any], with_status: bool) -> dict[str, Any]:
    skip = {"metadata", "apiVersion", "kind"} | ({"status"} if with_status else set())
    return {k: v for k, v in obj.items() if k not in skip}


def _invalid(rt: ResourceType, name: str, causes: list[dict[str, Any]]) -> StatusError:
    return errors.invalid(rt.kind, rt.group, rt.plural, name, causes)


def _grace_seconds(pod: dict[str, Any], grace: int | None) -> int:
    """The deletion grace period: as requested, else the pod's own, else its spec's, else 30 s."""
    if grace is not None:
        return grace
    grace = meta(pod).get("deletionGracePeriodSeconds")
    if grace is None:
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return 30 if grace is None else int(grace)


_TYPE_META = ("apiVersion", "kind", "metadata")
_IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
# Schema errors that keep kube-apiserver from running the CEL rules (``hasBlockingErr``)
_BLOCKS_RULES = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)


def _below_status(cause: dict[str, Any]) -> dict[str, Any]:
    field = cause.get("field") or ""
    if not field.startswith("status."):
        return cause
    below = field.removeprefix("status.")
    return {**cause, "message": cause["message"].replace(f"{field} in body", f"{below} in body")}


def _check_custom_type_meta(rt: ResourceType, version: str, obj: dict[str, Any]) -> None:
    """A custom resource's body: another ``apiVersion`` is a 400 (the handler compares it
    with the path's), another ``kind`` a 422 naming the body's kind."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if api_version and api_version != rt.api_version(version):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version(version)})"
        )
    if kind and kind != rt.kind:
        name = str(meta(obj).get("name") or "") if isinstance(obj.get("metadata"), dict) else ""
        cause = errors.field_cause("kind", f'Invalid value: "{kind}": must be {rt.kind}')
        raise errors.invalid(kind, rt.group, kind, name, [cause])


def _check_preconditions(
    rt: ResourceType, name: str, current: dict[str, Any], pre: dict[str, Any]
) -> None:
    """409 when DeleteOptions preconditions (uid, resourceVersion) do not match ``current``;
    kube-apiserver names the object by its kind here (``Operation cannot be fulfilled on
    ConfigMap "x"``), not by its resource."""
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    if uid and uid != current.get("uid"):
        raise errors.conflict(
            rt.group,
            rt.kind,
            name,
            f"the UID in the precondition ({uid}) does not match the UID in record ({current.get('uid')}). The object might have been deleted and then recreated",
        )
    if rv and rv != current.get("resourceVersion"):
        raise errors.conflict(
            rt.group,
            rt.kind,
            name,
            f"the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({current.get('resourceVersion')}). The object might have been modified",
        )


def _check_patch_request(
    rt: ResourceType, version: str, patch: Any, patch_type: str, field_manager: str | None
) -> None:
    """415 for a patch type the resource does not take, 400 for a malformed request; an
    apply without a field manager is an invalid PatchOptions (422), one of another kind or
    version than the resource's an ``invalid object type`` (400)."""
    if patch_type == "strategic" and rt.is_custom:
        raise errors.unknown_body_format(patches.accepted_content_types(custom=True))
    if patch_type not in ("merge", "json", "strategic", "apply"):
        raise errors.unsupported_media_type(f"unsupported patch type {patch_type!r}")
    if patch_type == "apply" and not field_manager:
        cause = errors.field_cause(
            "fieldManager", "Required value: is required for apply patch", "FieldValueRequired"
        )
        raise errors.invalid("PatchOptions", "meta.k8s.io", "PatchOptions", "", [cause])
    if patch_type != "json" and not isinstance(patch, dict):
        raise errors.bad_request("the patch body must be a JSON object")
    if patch_type == "apply":
        kind, api_version = patch.get("kind"), patch.get("apiVersion")
        if (kind, api_version) != (rt.kind, rt.api_version(version)) and (kind or api_version):
            group, _, body_version = str(api_version or "").rpartition("/")
            raise errors.bad_request(
                f"invalid object type: {group}/{body_version}, Kind={kind or ''}"
            )
        if not rt.is_custom:
            _check_applied_fields(rt, version, patch)


def _check_applied_fields(rt: ResourceType, version: str, patch: dict[str, Any]) -> None:
    """An apply of a built-in kind is turned into a typed object of its schema before any
    ``fieldValidation`` mode applies: a field the kind does not have fails it (a 500, as
    kube-apiserver answers it)."""
    unknown = decoding.drop_unknown_fields(rt, dict(patch))
    if not unknown:
        return
    m = meta(patch)
    gvk = f"{rt.group}/{version}, Kind={rt.kind}"
    where = f"{m.get('namespace') or ''}/{m.get('name') or ''}; {gvk}"
    errs = [f".{u}: field not declared in schema" for u in unknown]
    text = errs[0] if len(errs) == 1 else "\n".join(["errors:", *("  " + e for e in errs)])
    raise errors.StatusError(500, "", f"failed to create typed patch object ({where}): {text}")


class Registry:
    """Thread-safe storage with the semantics of the Kubernetes API (see module docstring).

    Its ``list`` method shadows the builtin inside the class body, so annotations there spell
    ``builtins.list``."""

    def __init__(self, watch_history: int = 10000, clock: Callable[[], float] = time.time) -> None:
        self.store = Store(watch_history, clock)
        self.gc = GarbageCollector(self.store, self)
        self.store.commit_observers.append(self.gc.observe)
        self._local = threading.local()  # per-request fieldValidation mode and warnings
        self._cluster_ips = defaults.ClusterIPAllocator()
        # mutating admission plugins, called as plugin(rt, namespace, obj) before a create
        self.admission: list[Callable[[ResourceType, str | None, dict[str, Any]], None]] = []
        for ns in _SEEDED_NAMESPACES:
            self.create(("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
        self.gc.start()

    # ------------------------------------------------------------------ types, reads and watches
    def resolve(self, gvr: GVR) -> ResourceType:
        """The resource type served at ``gvr``; 404 when there is none."""
        return self.store.resolve(gvr)

    def resource_types(self) -> list[ResourceType]:
        return self.store.resource_types()

    @property
    def types_generation(self) -> int:
        """Bumped by every change of the served types (CRDs), for discovery's caches."""
        return self.store.types_generation

    @property
    def resource_version(self) -> int:
        return self.store.resource_version

    @property
    def clock(self) -> Callable[[], float]:
        return self.store.clock

    @property
    def commit_observers(self) -> list[Callable[[ResourceType, Event], None]]:
        """Called with every committed event, lock held; an observer must only queue work."""
        return self.store.commit_observers

    @property
    def watch_capacity(self) -> int:
        """Queued events before a lagging watch is dropped."""
        return self.store.watch_capacity

    @watch_capacity.setter
    def watch_capacity(self, capacity: int) -> None:
        self.store.watch_capacity = capacity

    def get(self, gvr: GVR, namespace: str | None, name: str) -> dict[str, Any]:
        return clone(self.get_shared(gvr, namespace, name))

    def get_shared(self, gvr: GVR, namespace: str | None, name: str) -> dict[str, Any]:
        """The stored object itself (shared: never mutate it); 404 when absent."""
        return self.store.get(gvr, namespace, name)

    def list(
        self,
        gvr: GVR,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str]:
        """(copies of the matching objects, the list's resourceVersion)."""
        items, rv, _, _ = self.list_page(gvr, namespace, label_selector, field_selector)
        return [clone(i) for i in items], rv

    def list_page(
        self,
        gvr: GVR,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: int | None = None,
    ) -> ListPage:
        """One page of a LIST of stored objects (shared), as the HTTP layer serves it: the
        latest state or exactly ``resource_version`` (410 once compacted away); a continue
        token reads at the RV of the list it continues."""
        return self.store.list_page(
            gvr,
            namespace,
            label_selector,
            field_selector,
            limit,
            continue_token,
            resource_version,
        )

    def watch(
        self,
        gvr: GVR,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        """Replay from ``resource_version`` (synthetic ADDED events when it is empty or "0"),
        then live events; 410 Expired when that RV has left the history."""
        return self.store.watch(gvr, namespace, resource_version, label_selector, field_selector)

    def bookmark_rv(self, w: Watch) -> int | None:
        """The RV a bookmark may carry for ``w`` now: None while it still has queued events."""
        return self.store.bookmark_rv(w)

    def drop_watches(self, reason: str = "dropped by fault injection") -> int:
        return self.store.drop_watches(reason)

    def compact(self) -> None:
        """Forget all history: a watch or continue from any earlier RV now gets 410."""
        self.store.compact()

    def watch_count(self) -> int:
        return self.store.watch_count()

    # ------------------------------------------------------------------ create
    def create(
        self, gvr: GVR, namespace: str | None, obj: dict[str, Any], dry_run: bool = False
    ) -> dict[str, Any]:
        return clone(self.create_shared(gvr, namespace, obj, dry_run))

    def create_shared(
        self, gvr: GVR, namespace: str | None, obj: dict[str, Any], dry_run: bool = False
    ) -> dict[str, Any]:
        rt = self.store.resolve(gvr)
        obj = self._check_body(rt, gvr[1], obj)
        m = obj["metadata"]
        namespace = self._body_namespace(rt, namespace, m)
        if not m.get("name"):
            if m.get("generateName"):
                m["name"] = m["generateName"] + _random_suffix()
            else:
                cause = errors.field_cause(
                    "metadata.name",
                    "Required value: name or generateName is required",
                    "FieldValueRequired",
                )
                raise _invalid(rt, "", [cause])
        for plugin in self.admission:
            plugin(rt, namespace, obj)
        with self.store.lock:
            if rt.namespaced and namespace is not None:  # never None once namespaced
                self._check_namespace(rt, namespace, m["name"])
            key = self.store.key_for(rt, namespace, m["name"])
            if self.store.stored(rt.storage_key, key) is not None:
                raise errors.already_exists(rt.group, rt.plural, m["name"])
            for k in (
                "resourceVersion",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "selfLink",
            ):
                m.pop(k, None)
            m["uid"] = str(uuid.uuid4())
            m["creationTimestamp"] = self.store.now()
            if rt.generation:
                m["generation"] = 1
            if rt.has_status and rt.storage_key != _NODE:
                obj.pop("status", None)
            self._defaults(rt, gvr[1], obj, None)
            obj = self._prune(rt, gvr[1], obj)
            self._validate(rt, gvr[1], obj, None)
            if rt.storage_key == _POD and namespace is not None:
                self._admit_quota(namespace, obj)
            if dry_run:  # never stored: no resourceVersion, as kube-apiserver answers
                m.pop("resourceVersion", None)
                return self.store.present(rt, gvr[1], obj)
            if rt.storage_key == _CRD:
                self.store.register_type(crds.resource_type_for(obj))
            stored = self.store.commit(rt, key, obj, "ADDED", None)
            return self.store.present(rt, gvr[1], stored)

    def _admit_quota(self, namespace: str, pod: dict[str, Any]) -> None:
        """The ResourceQuota admission plugin on a pod create (``admission.quota``), under the
        store's lock so that concurrent creates cannot both take the last of a quota."""
        quotas, pods = [], []
        for rt, obj in self.store.objects_in_namespace(namespace):
            if rt.storage_key == _QUOTA:
                quotas.append(obj)
            elif rt.storage_key == _POD:
                pods.append(obj)
        if not quotas:
            return
        now = datetime.fromtimestamp(self.store.clock(), UTC)
        try:
            quota.admit_pod(pod, quotas, pods, now)
        except quota.QuotaRefusal as refusal:
            name = str(pod["metadata"].get("name", ""))
            raise errors.forbidden("", "pods", name, str(refusal)) from None

    def _check_body(
        self, rt: ResourceType, version: str, obj: Any, whole: bool = True
    ) -> dict[str, Any]:
        """``obj`` checked and decoded as the real server decodes a body, as a fresh copy the
        registry may store. ``whole=False`` for a status write, which keeps only the status
        (``_status_write`` copies it): the whole body is still checked, but only its top level
        and metadata are fresh, what lies below them may be the caller's."""
        if not isinstance(obj, dict):
            raise errors.bad_request(
                f"the body of the request must be a JSON object describing a {rt.kind}"
            )
        obj = strip_nulls(obj)
        decoding.check_type_meta(rt, version, obj)
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if rt.is_custom:
            unserved = bool(api_version) and api_version.rpartition("/")[2] not in rt.versions
            if unserved and getattr(self._local, "mode", None) == "Warn":
                # no schema for a version the CRD does not serve: every field is unknown
                self._warn([f'unknown field "{k}"' for k in obj if k not in _TYPE_META])
            _check_custom_type_meta(rt, version, obj)
        elif (kind and kind != rt.kind) or api_version:
            self._check_builtin_type_meta(rt, version, obj, kind or rt.kind, api_version)
        obj = {"apiVersion": rt.stored_api_version, "kind": rt.kind} | {
            k: v for k, v in obj.items() if k not in ("apiVersion", "kind")
        }
        if not isinstance(obj.get("metadata"), dict):
            if obj.get("metadata") is not None:
                raise errors.bad_request("metadata must be an object")
            obj["metadata"] = {}
        decoded = decoding.decode(rt, version, obj)
        return cast(dict[str, Any], detach(decoded) if whole else decoded)

    def _check_builtin_type_meta(
        self,
        rt: ResourceType,
        version: str,
        obj: dict[str, Any],
        kind: str,
        api_version: str | None,
    ) -> None:
        """A built-in kind's body is decoded by the scheme as the kind its ``apiVersion`` and
        ``kind`` name, then converted: 400 when the scheme has no such kind, or when it is
        another kind than the resource's (no conversion between kinds)."""
        api_version = api_version or rt.api_version(version)
        group, _, body_version = api_version.rpartition("/")
        if group == rt.group and kind == rt.kind and body_version in rt.versions:
            return
        known = next(
            (
                t
                for t in self.store.resource_types()
                if t.group == group and t.kind == kind and body_version in t.versions
                if not t.is_custom
            ),
            None,
        )
        if known:
            try:  # decoded as the kind it names first: that kind's decoding errors come first
                decoding.decode(known, body_version, obj)
            except errors.StatusError as e:
                e.status["message"] = e.message = e.message.replace(
                    f"cannot be handled as a {kind}:", f"cannot be handled as a {rt.kind}:", 1
                )
                raise
            package = group.split(".")[0] if group else "core"
            why = f"converting ({body_version}.{kind}) to ({package}.{rt.kind}): unknown conversion"
        else:
            why = (
                f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                '"pkg/runtime/scheme.go:111"'
            )
        raise errors.bad_request(
            f'{kind} in version "{body_version}" cannot be handled as a {rt.kind}: {why}'
        )

    def _body_namespace(
        self, rt: ResourceType, namespace: str | None, m: dict[str, Any]
    ) -> str | None:
        if not rt.namespaced:
            m.pop("namespace", None)
            return None
        body_ns = m.get("namespace")
        if namespace and body_ns and body_ns != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        namespace = namespace or body_ns
        if not namespace:
            raise errors.bad_request("a namespace is required for namespaced resources")
        m["namespace"] = namespace
        return namespace

    def _check_namespace(self, rt: ResourceType, namespace: str, name: str) -> None:
        ns = self.store.stored(_NAMESPACE, ("", namespace))
        if ns is None:
            raise errors.not_found("", "namespaces", namespace)
        if meta(ns).get("deletionTimestamp"):
            refusal = errors.forbidden(
                rt.group,
                rt.plural,
                name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
            refusal.status["details"]["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise refusal

    # ------------------------------------------------------------------ defaults and validation
    def _defaults(
        self, rt: ResourceType, version: str, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        if rt.storage_key == _CRD:
            errs = validation.validate_crd(obj)
            spec = obj.get("spec") or {}
            taken = self.store.type_at(
                (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
            )
            for i, v in enumerate(spec.get("versions") or []):
                sch = (
                    (v.get("schema") or {}).get("openAPIV3Schema") if isinstance(v, dict) else None
                )
                path = f"spec.versions[{i}].schema.openAPIV3Schema"
                errs += celrules.compile_errors(sch, path)
            if taken is not None and not taken.is_custom:
                errs.append(
                    errors.field_cause(
                        "spec.names.plural",
                        "Invalid value: the name is served by a built-in resource",
                    )
                )
            if errs:
                raise _invalid(rt, obj["metadata"].get("name", ""), errs)
            obj["status"] = crds.crd_status(obj, (old or {}).get("status"), self.store.now())
            if errs := validation.validate_crd_stored_versions(obj):
                raise _invalid(rt, obj["metadata"].get("name", ""), errs)
        elif rt.is_custom:
            sch = crds.schema_for(rt.crd, version)  # type: ignore[arg-type]
            if sch:
                schema.apply_defaults(obj, sch)
        elif rt.storage_key in workloads.KINDS:
            workloads.apply_defaults(rt.storage_key, obj)
        elif rt.storage_key in podgroups.KINDS:
            podgroups.admit(rt.storage_key, obj, old)
        else:
            defaults.apply(rt.storage_key, obj, old, self._cluster_ips)

    @contextlib.contextmanager
    def field_validation(self, mode: str | None) -> Iterator[builtins.list[str]]:
        """Within this block, writes from this thread treat fields their kind does not declare
        as the ``fieldValidation`` mode says: "Strict" rejects them (400), "Warn" prunes them and
        collects a warning in the yielded list, "Ignore" (the default outside a request) prunes
        them silently."""
        self._local.mode = mode
        self._local.warnings = []
        try:
            yield self._local.warnings
        finally:
            self._local.mode = None
            self._local.warnings = None

    def _warn(self, warnings: builtins.list[str]) -> None:
        """Add ``Warning`` headers to the current request (a no-op outside one)."""
        collected = getattr(self._local, "warnings", None)
        if collected is not None:
            collected.extend(warnings)

    def _prune(self, rt: ResourceType, version: str, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` without the fields its kind does not declare, as the ``fieldValidation``
        mode says: "Strict" refuses them (400), "Warn" (the default over HTTP, as in
        kube-apiserver) drops them with a warning each, "Ignore" drops them."""
        if rt.is_custom:
            pruned, unknown = schema.prune(obj, crds.schema_for(rt.crd, version))  # type: ignore[arg-type]
        else:
            pruned, unknown = obj, decoding.drop_unknown_fields(rt, obj)
        if unknown:
            mode = getattr(self._local, "mode", None)
            if mode == "Strict":
                raise errors.bad_request(
                    f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: '
                    "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
                )
            if mode == "Warn":
                self._local.warnings.extend(f'unknown field "{u}"' for u in unknown)
        return pruned

    def _validate(
        self,
        rt: ResourceType,
        version: str,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        status_write: bool = False,
    ) -> None:
        name = obj["metadata"]["name"]
        causes = validation.validate_name(
            name, "subdomain" if rt.name_rule == "crd" else rt.name_rule
        )
        causes += validation.validate_metadata(obj["metadata"])
        if rt.storage_key == _POD:
            causes += validation.validate_pod(obj)
            causes += podgroups.pod_scheduling_group_errors(obj, old)
        elif rt.storage_key == ("", "services"):
            causes += ports.service_port_errors(obj)
        elif rt.storage_key == ("", "secrets"):
            causes += validation.validate_secret(obj, old)
        else:
            for path, spec in decoding.pod_specs(rt, obj):
                causes += validation.validate_pod_spec(spec, path)
        if rt.storage_key in workloads.KINDS:
            causes += workloads.validate(obj, old)
        elif rt.storage_key in podgroups.KINDS:
            causes += podgroups.validate(rt.storage_key, obj, old)
        if rt.is_custom:
            sch = crds.schema_for(rt.crd, version)  # type: ignore[arg-type]
            if sch:
                body = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
                sub = {
                    k: v
                    for k, v in (sch.get("properties") or {}).items()
                    if k not in ("metadata", "apiVersion", "kind")
                }
                schema_causes = schema.validate(body, {**sch, "properties": sub})
                if status_write:
                    # the status strategy validates against the status schema: its messages
                    # name paths below status (the causes' fields still start at the root)
                    schema_causes = [_below_status(c) for c in schema_causes]
                causes += schema_causes
                if any(c["reason"] in _BLOCKS_RULES for c in schema_causes):
                    causes.append(errors.field_cause("<nil>", celrules.NOT_CHECKED))
                else:
                    outcome = celrules.validate(obj, old, sch)
                    causes += outcome.causes
                    self._warn(outcome.warnings)
        if causes:
            raise _invalid(rt, name, causes)

    # ------------------------------------------------------------------ update
    def update(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        obj: dict[str, Any],
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        return clone(self.update_shared(gvr, namespace, name, obj, subresource, dry_run))

    def update_shared(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        obj: dict[str, Any],
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        rt = self.store.resolve(gvr)
        body = self._check_body(rt, gvr[1], obj, whole=subresource != "status")
        m = body["metadata"]
        if m.get("name") and m["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({m['name']}) does not match the name on the URL ({name})"
            )
        m["name"] = name
        namespace = self._body_namespace(rt, namespace, m)
        with self.store.lock:
            key = self.store.key_for(rt, namespace, name)
            old = self.store.stored(rt.storage_key, key)
            if old is None:
                raise errors.not_found(rt.group, rt.plural, name)
            rv = m.get("resourceVersion")
            if rv and rv != meta(old).get("resourceVersion"):
                raise errors.conflict(rt.group, rt.plural, name)
            return self._write(rt, gvr[1], key, old, body, subresource, dry_run)

    def _write(
        self,
        rt: ResourceType,
        version: str,
        key: Key,
        old: dict[str, Any],
        body: dict[str, Any],
        subresource: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        """Turn ``body`` into the next stored state of ``old``, and commit it unless unchanged."""
        if subresource == "status":
            new = self._status_write(rt, version, old, body)
        else:
            new = self._main_write(rt, version, old, body)
        new["apiVersion"], new["kind"] = rt.stored_api_version, old["kind"]
        nm, om = new["metadata"], meta(old)
        if rt.generation and not equal(
            _spec_part(new, rt.has_status), _spec_part(old, rt.has_status)
        ):
            nm["generation"] = int(om.get("generation") or 1) + 1
        if equal(_without_rv(new), _without_rv(old)):
            return self.store.present(rt, version, old)
        if dry_run:
            return self.store.present(rt, version, new)
        if (
            om.get("deletionTimestamp")
            and rt.storage_key != _NAMESPACE
            and not nm.get("finalizers")
            and not nm.get("deletionGracePeriodSeconds")
        ):
            # the write that empties a deleting object's finalizers deletes it instead; it
            # answers the object as written, at the version it replaced (kube-apiserver's
            # deleteWithoutFinalizers)
            self._remove(rt, key, new, old)
            return self.store.present(
                rt,
                version,
                {**new, "metadata": {**nm, "resourceVersion": om.get("resourceVersion", "")}},
            )
        if rt.storage_key == _CRD:
            self.store.register_type(crds.resource_type_for(new))
            self._default_stored_objects(new, old)
        return self.store.present(rt, version, self.store.commit(rt, key, new, "MODIFIED", old))

    def _status_write(
        self, rt: ResourceType, version: str, old: dict[str, Any], body: dict[str, Any]
    ) -> dict[str, Any]:
        """A write to the status subresource: only ``status`` is taken from ``body``."""
        if not rt.has_status:
            raise errors.resource_not_found()
        # everything but the status stays as stored: shared with ``old`` (stored objects are
        # never mutated), only the dicts this write changes are new
        new = {**old, "metadata": dict(meta(old))}
        if "status" in body:
            new["status"] = detach(body["status"])
        else:
            new.pop("status", None)
        new = self._prune(rt, version, new)
        if rt.is_custom:
            self._validate(rt, version, new, old, status_write=True)
        else:
            errs = []
            if rt.storage_key == _CRD:
                errs = validation.validate_crd_stored_versions(new)
            elif rt.storage_key == podgroups.PODGROUPS:
                errs = podgroups.validate_status(new)
            if errs:
                raise _invalid(rt, meta(new).get("name", ""), errs)
        return new

    def _main_write(
        self, rt: ResourceType, version: str, old: dict[str, Any], body: dict[str, Any]
    ) -> dict[str, Any]:
        """A write to the object itself: status kept from ``old`` when it is a subresource."""
        new = body
        if rt.has_status and rt.storage_key != _CRD:
            if "status" in old:
                new["status"] = clone(old["status"])
            else:
                new.pop("status", None)
        self._merge_meta(rt, old, new)
        self._defaults(rt, version, new, old)
        new = self._prune(rt, version, new)
        self._validate(rt, version, new, old)
        return new

    def _merge_meta(self, rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
        om, nm = meta(old), new["metadata"]
        for k in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "namespace",
        ):
            if k in om:
                nm[k] = om[k]
            else:
                nm.pop(k, None)
        nm.pop("selfLink", None)
        if om.get("deletionTimestamp"):
            added = set(nm.get("finalizers") or []) - set(om.get("finalizers") or [])
            if added:
                cause = errors.field_cause(
                    "metadata.finalizers",
                    f"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {sorted(added)}",
                    "FieldValueForbidden",
                )
                raise _invalid(rt, nm["name"], [cause])

    # ------------------------------------------------------------------ patch
    def patch(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Patch types: "merge", "json", "strategic", "apply" (apply creates a missing object)."""
        obj, _ = self.patch_shared(
            gvr, namespace, name, patch, patch_type, subresource, dry_run, field_manager, force
        )
        return clone(obj)

    def patch_shared(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        rt = self.store.resolve(gvr)
        _check_patch_request(rt, gvr[1], patch, patch_type, field_manager)
        with self.store.lock:
            key = self.store.key_for(rt, namespace if rt.namespaced else None, name)
            old = self.store.stored(rt.storage_key, key)
            if old is None:
                if patch_type == "apply" and subresource is None:
                    body = self._applied_new(rt, gvr[1], name, patch, field_manager or "")
                    return self.create_shared(gvr, namespace, body, dry_run), True
                raise errors.not_found(rt.group, rt.plural, name)
            current = self.store.present(rt, gvr[1], old)
            result = self._patched(rt, gvr[1], current, patch, patch_type, field_manager or "")
            want_rv = meta(patch).get("resourceVersion") if isinstance(patch, dict) else None
            if want_rv and want_rv != meta(old).get("resourceVersion"):
                raise errors.conflict(rt.group, rt.plural, name)
            body = self._check_patched(rt, gvr[1], result, patch_type, subresource)
            if body["metadata"].get("name") != name:
                raise errors.bad_request("metadata.name cannot be changed by a patch")
            if rt.namespaced and body["metadata"].get("namespace") != key[0]:
                raise errors.bad_request("metadata.namespace cannot be changed by a patch")
            return self._write(rt, gvr[1], key, old, body, subresource, dry_run), False

    def _check_patched(
        self,
        rt: ResourceType,
        version: str,
        result: dict[str, Any],
        patch_type: str,
        subresource: str | None,
    ) -> dict[str, Any]:
        """The patched object checked as a body; one that does not decode into its Go type is,
        from a JSON, merge or strategic merge patch, a 422 on the field ``patch`` whose value
        is the patched document (Go's JSON: keys sorted)."""
        try:
            return self._check_body(rt, version, result, whole=subresource != "status")
        except errors.StatusError as e:
            if patch_type == "apply" or e.code != 400 or "cannot be handled as a" not in e.message:
                raise
            why = e.message.split(f"cannot be handled as a {rt.kind}: ", 1)[-1]
            document = json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            value = celrules.go_value(document)
            cause = errors.field_cause("patch", f"Invalid value: {value}: {why}")
            raise errors.invalid("", "", "", "", [cause]) from e

    def _applied_new(
        self, rt: ResourceType, version: str, name: str, patch: dict[str, Any], manager: str
    ) -> dict[str, Any]:
        """The object a server-side apply creates when ``name`` does not exist yet."""
        body = dict(patch)
        body.setdefault("metadata", {})
        if body["metadata"].get("name", name) != name:
            raise errors.bad_request("the name of the object does not match the name on the URL")
        body["metadata"] = {**body["metadata"], "name": name}
        return apply.finish(body, None, patch, manager, rt.api_version(version), self.store.now())

    def _patched(
        self,
        rt: ResourceType,
        version: str,
        current: dict[str, Any],
        patch: Any,
        patch_type: str,
        manager: str,
    ) -> dict[str, Any]:
        """``current`` with ``patch`` applied; 400 unless the result is an object."""
        if patch_type == "merge":
            result = patches.merge_patch(current, patch)
        elif patch_type == "json":
            result = patches.json_patch(clone(current), patch)
        elif rt.is_custom:  # apply on a custom resource
            result = patches.merge_patch(current, patch)
        else:
            result = patches.strategic_merge(current, patch, rt.kind)
        if patch_type == "apply" and isinstance(result, dict):
            result = apply.finish(
                result, current, patch, manager, rt.api_version(version), self.store.now()
            )
        if not isinstance(result, dict):
            raise errors.bad_request("the patch produced something other than an object")
        return result

    # ------------------------------------------------------------------ delete
    def delete(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        return clone(
            self.delete_shared(
                gvr,
                namespace,
                name,
                grace_period_seconds,
                propagation_policy,
                preconditions,
                dry_run,
            )
        )

    def delete_shared(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        rt = self.store.resolve(gvr)
        if propagation_policy not in (None, "", "Background", "Foreground", "Orphan"):
            raise errors.invalid(
                "DeleteOptions",
                "",
                "",
                "",
                [
                    errors.field_cause(
                        "propagationPolicy",
                        f'Unsupported value: "{propagation_policy}": supported values: "Foreground", "Background", "Orphan", "nil"',
                        "FieldValueNotSupported",
                    )
                ],
            )
        with self.store.lock:
            key = self.store.key_for(rt, namespace if rt.namespaced else None, name)
            old = self.store.stored(rt.storage_key, key)
            if old is None:
                raise errors.not_found(rt.group, rt.plural, name)
            om = meta(old)
            _check_preconditions(rt, name, om, preconditions or {})
            version = gvr[1]
            if rt.storage_key == _NAMESPACE:
                return self.store.present(
                    rt, version, self._delete_namespace(rt, key, old, dry_run)
                )
            if rt.storage_key == _POD and self._graceful(old, grace_period_seconds):
                return self.store.present(
                    rt,
                    version,
                    self._delete_gracefully(rt, key, old, grace_period_seconds, dry_run),
                )
            finalizers = self._deletion_finalizers(om, propagation_policy)
            if finalizers:
                marked = self._mark_deleting(
                    rt, key, old, finalizers, grace_period_seconds == 0, dry_run
                )
                return self.store.present(rt, version, marked)
            if rt.storage_key == _POD:
                return self.store.present(rt, version, self._delete_pod_now(rt, key, old, dry_run))
            if dry_run:
                return self.store.present(rt, version, old)
            # answered at the deletion's resourceVersion, as etcd's delete is decoded
            return self.store.present(rt, version, self._remove(rt, key, clone(old), old))

    def _deletion_finalizers(
        self, om: dict[str, Any], propagation_policy: str | None
    ) -> builtins.list[str]:
        """The object's finalizers plus the one its propagation policy needs while it has
        dependents ("orphan" for Orphan, "foregroundDeletion" for Foreground)."""
        finalizers = list(om.get("finalizers") or [])
        if self.store.has_dependents(om.get("uid", "")):
            wanted = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(
                propagation_policy or ""
            )
            if wanted and wanted not in finalizers:
                finalizers.append(wanted)
        return finalizers

    def _mark_deleting(
        self,
        rt: ResourceType,
        key: Key,
        old: dict[str, Any],
        finalizers: builtins.list[str],
        grace_zero: bool,
        dry_run: bool,
    ) -> dict[str, Any]:
        """Set deletionTimestamp on an object its finalizers keep; unchanged when already set
        with the same finalizers, unless a zero grace period shortens the pending one."""
        om = meta(old)
        shorten = grace_zero and om.get("deletionGracePeriodSeconds")
        unchanged = finalizers == list(om.get("finalizers") or [])
        if om.get("deletionTimestamp") and unchanged and not shorten:
            return old
        new = clone(old)
        nm = new["metadata"]
        nm.setdefault("deletionTimestamp", self.store.now())
        nm["deletionGracePeriodSeconds"] = 0 if shorten else nm.get("deletionGracePeriodSeconds", 0)
        nm["finalizers"] = finalizers
        if dry_run:
            return new
        return self.store.commit(rt, key, new, "MODIFIED", old)

    def _remove(
        self, rt: ResourceType, key: Key, last: dict[str, Any], old: dict[str, Any]
    ) -> dict[str, Any]:
        """Really delete: commit a DELETED event carrying ``last`` (lock held)."""
        if rt.storage_key == _CRD:
            self._drop_custom_resources(last)
        return self.store.commit(rt, key, last, "DELETED", old)

    def _default_stored_objects(self, crd: dict[str, Any], old_crd: dict[str, Any]) -> None:
        """A CRD update that changes its storage version's schema: the stored objects read with
        the new defaults from now on, as kube-apiserver defaults what it reads from etcd with
        the storage version's schema. Nothing is written back: no new resourceVersion, no watch
        event (lock held)."""
        version = crds.storage_version(crd)
        new_schema = crds.schema_for(crd, version) if version else None
        if not new_schema or new_schema == crds.schema_for(old_crd, version or ""):
            return
        spec = crd.get("spec") or {}
        storage_key = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        self.store.read_with(storage_key, lambda obj: schema.apply_defaults(obj, new_schema))

    def _drop_custom_resources(self, crd: dict[str, Any]) -> None:
        spec = crd.get("spec") or {}
        sk = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        rt = self.store.type_at(sk)
        if rt is None or not rt.is_custom:
            return
        for key, obj in sorted(self.store.objects_of(sk).items()):
            self.store.commit(rt, key, clone(obj), "DELETED", obj)
        self.store.unregister_type(sk)
        self.store.drop_storage(sk)

    def _graceful(self, pod: dict[str, Any], grace: int | None) -> bool:
        node = ((pod.get("spec") or {}).get("nodeName")) or ""
        if not node or self.store.stored(_NODE, ("", node)) is None:
            return False
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return False  # nothing left to stop: deleted at once, as kube-apiserver does
        return int(_grace_seconds(pod, grace)) > 0

    def _delete_pod_now(
        self, rt: ResourceType, key: Key, old: dict[str, Any], dry_run: bool
    ) -> dict[str, Any]:
        """A pod no kubelet must stop goes as kube-apiserver deletes it: its deletion is
        written first (deletionTimestamp, a zero grace period, a new generation), then it is
        removed; the answer is that state at the deletion's resourceVersion (watchers see
        MODIFIED, then DELETED)."""
        marked = clone(old)
        m = marked["metadata"]
        m.setdefault("deletionTimestamp", self.store.now())
        m["deletionGracePeriodSeconds"] = 0
        m["generation"] = int(m.get("generation") or 1) + 1
        if dry_run:
            return marked
        stored = self.store.commit(rt, key, marked, "MODIFIED", old)
        return self._remove(rt, key, clone(stored), stored)

    def _delete_gracefully(
        self, rt: ResourceType, key: Key, old: dict[str, Any], grace: int | None, dry_run: bool
    ) -> dict[str, Any]:
        om = meta(old)
        grace = _grace_seconds(old, grace)
        if om.get("deletionTimestamp") and int(om.get("deletionGracePeriodSeconds") or 0) <= grace:
            return old
        new = clone(old)
        new["metadata"]["deletionTimestamp"] = format_time(self.store.clock() + grace)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        new["metadata"]["generation"] = int(om.get("generation") or 1) + 1  # as kube-apiserver
        if dry_run:
            return new
        return self.store.commit(rt, key, new, "MODIFIED", old)

    def _delete_namespace(
        self, rt: ResourceType, key: Key, old: dict[str, Any], dry_run: bool
    ) -> dict[str, Any]:
        if key[1] in _IMMORTAL_NAMESPACES:  # the NamespaceLifecycle admission plugin
            raise errors.forbidden("", "namespaces", key[1], "this namespace may not be deleted")
        if meta(old).get("deletionTimestamp"):
            return old
        new = clone(old)
        new["metadata"]["deletionTimestamp"] = self.store.now()
        new.setdefault("status", {})["phase"] = "Terminating"
        if dry_run:
            return new
        stored = self.store.commit(rt, key, new, "MODIFIED", old)
        self.gc.enqueue(("namespace", key[1]))
        return stored

    def finish_namespace(self, name: str) -> bool:
        """Remove a terminating namespace once it is empty; True when it is gone."""
        with self.store.lock:
            rt = self.store.resolve(_NAMESPACES)
            old = self.store.stored(_NAMESPACE, ("", name))
            if old is None:
                return True
            if not meta(old).get("deletionTimestamp"):
                return False
            if self.store.has_objects_in(name):
                return False
            last = clone(old)
            last.setdefault("spec", {})["finalizers"] = []
            self._remove(rt, ("", name), last, old)
            return True

    def delete_collection(
        self,
        gvr: GVR,
        namespace: str | None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        dry_run: bool = False,
    ) -> builtins.list[dict[str, Any]]:
        """The objects deleted, as they were listed before (kube-apiserver's answer)."""
        items, _, _, _ = self.list_page(gvr, namespace, label_selector, field_selector)
        out = []
        for item in items:
            m = meta(item)
            try:
                self.delete_shared(
                    gvr,
                    m.get("namespace"),
                    m["name"],
                    grace_period_seconds,
                    propagation_policy,
                    None,
                    dry_run,
                )
            except StatusError as e:
                if e.code != 404:
                    raise
            else:
                out.append(item)
        return out

    # ------------------------------------------------------------------ scale
    def get_scale(self, gvr: GVR, namespace: str | None, name: str) -> dict[str, Any]:
        rt = self.store.resolve(gvr)
        if "scale" not in rt.subresources:
            raise errors.resource_not_found()
        return scale.to_scale(rt, gvr[1], self.get_shared(gvr, namespace, name))

    def update_scale(
        self, gvr: GVR, namespace: str | None, name: str, body: Any, dry_run: bool = False
    ) -> dict[str, Any]:
        """Write a Scale: its spec.replicas goes to the object; its RV (if set) is a precondition."""
        rt = self.store.resolve(gvr)
        if "scale" not in rt.subresources:
            raise errors.resource_not_found()
        with self.store.lock:
            current = self.get_shared(gvr, namespace, name)
            want_rv = meta(body).get("resourceVersion") if isinstance(body, dict) else None
            if want_rv and want_rv != meta(current).get("resourceVersion"):
                raise errors.conflict(rt.group, rt.plural, name)
            new = scale.apply_scale(rt, gvr[1], current, body)
            new = {**new, "metadata": {**meta(new), "resourceVersion": ""}}
            return scale.to_scale(
                rt, gvr[1], self.update_shared(gvr, namespace, name, new, None, dry_run)
            )

    def patch_scale(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        with self.store.lock:
            current = self.get_scale(gvr, namespace, name)
            if patch_type == "json":
                patched = patches.json_patch(clone(current), patch)
            elif patch_type in ("merge", "strategic", "apply"):
                if not isinstance(patch, dict):
                    raise errors.bad_request("the patch body must be a JSON object")
                patched = patches.merge_patch(current, patch)
            else:
                raise errors.unsupported_media_type(f"unsupported patch type {patch_type!r}")
            return self.update_scale(gvr, namespace, name, patched, dry_run)

    # ------------------------------------------------------------------ pods
    def bind_pod(self, namespace: str, name: str, node_name: str) -> dict[str, Any]:
        """What POST pods/{name}/binding does: set spec.nodeName and PodScheduled=True."""
        return clone(self.bind_pod_shared(namespace, name, node_name))

    def bind_pod_shared(self, namespace: str, name: str, node_name: str) -> dict[str, Any]:
        rt = self.store.resolve(_PODS)
        with self.store.lock:
            old = self.store.stored(_POD, (namespace, name))
            if old is None:
                raise errors.not_found("", "pods", name)
            current = (old.get("spec") or {}).get("nodeName")
            if current:
                raise errors.conflict(
                    "", "pods", name, f'pod {name} is already assigned to node "{current}"'
                )
            if meta(old).get("deletionTimestamp"):
                raise errors.conflict(
                    "", "pods", name, f"pod {name} is being deleted, cannot be assigned to a host"
                )
            # a new dict for each part the binding changes, the rest shared with ``old``
            status = dict(old.get("status") or {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": self.store.now(),
                }
            )
            status["conditions"] = conds
            new = {
                **old,
                "metadata": dict(meta(old)),
                "spec": {**(old.get("spec") or {}), "nodeName": node_name},
                "status": status,
            }
            return self.store.commit(rt, (namespace, name), new, "MODIFIED", old)

    # ------------------------------------------------------------------ garbage collector's writes
    def delete_dependent(
        self, rt: ResourceType, namespace: str | None, name: str, policy: str
    ) -> None:
        self.delete_shared(self.store.gvr_of(rt), namespace, name, None, policy)

    def set_owner_references(
        self, rt: ResourceType, obj: dict[str, Any], refs: builtins.list[dict[str, Any]]
    ) -> None:
        m = meta(obj)
        with self.store.lock:
            current = self.store.stored(rt.storage_key, (m.get("namespace", ""), m["name"]))
            if current is None or meta(current).get("uid") != m.get("uid"):
                return
            body = clone(current)
            if refs:
                body["metadata"]["ownerReferences"] = refs
            else:
                body["metadata"].pop("ownerReferences", None)
            self.update_shared(self.store.gvr_of(rt), m.get("namespace"), m["name"], body)

    def remove_finalizer(self, rt: ResourceType, uid: str, finalizer: str) -> None:
        with self.store.lock:
            found = self.store.lookup_uid(uid)
            if found is None:
                return
            _, current = found
            m = meta(current)
            body = clone(current)
            body["metadata"]["finalizers"] = [
                f for f in m.get("finalizers") or [] if f != finalizer
            ]
            self.update_shared(self.store.gvr_of(rt), m.get("namespace"), m["name"], body)

    def stop(self) -> None:
        self.gc.stop()
        self.store.drop_watches("server stopping")
        self.store.verify_unchanged()
