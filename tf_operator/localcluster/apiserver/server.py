"""``APIServer``: the Kubernetes REST API over HTTP(S) in front of a ``Registry``.

Request flow: ``httpcore`` parses the request; ``_app`` authenticates (bearer token, TLS only),
applies injected faults, routes by path to discovery/OpenAPI/version handlers or to the REST
handlers, and turns any ``StatusError`` into a ``Status`` reply. Watches and ``log?follow=true``
stream chunked JSON/text from their connection's thread; every other reply is one JSON body with
``Content-Type: application/json`` (or a Table when kubectl asks for one).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from . import discovery, errors, protobuf, tables
from .errors import StatusError
from .faults import Faults
from .httpcore import ClientGone, Request, Responder, ThreadingServer
from .objects import meta
from .registry import Registry
from .resources import ResourceType
from .tls import make_self_signed, server_context

log = logging.getLogger(__name__)

LogProvider = Callable[..., Iterator[bytes]]
FAULTS_PATH = "/_localcluster/faults"
MAX_WATCH_SECONDS = 1800  # cap for watches that ask for no timeout
WATCH_BATCH_INTERVAL = 0.01  # minimum spacing of writes on one watch stream under load
_TRUE = {"true", "1", "t", "yes", "y"}
_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}


def _bool(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUE


def _int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as e:
        raise errors.bad_request(f"invalid value for {name}: {value!r}") from e


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class APIServer:
    """The emulated kube-apiserver. ``start()`` returns once it listens; ``url`` is its address."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        watch_history: int = 10000,
        tls: bool = False,
        token: str | None = None,
        faults: dict[str, Any] | None = None,
        registry: Registry | None = None,
        bookmark_interval: float = 5.0,
    ) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self.token = token if token or not tls else secrets.token_hex(16)
        self.registry = registry or Registry(watch_history=watch_history)
        self.faults = Faults(self.registry, **(faults or {}))
        self.bookmark_interval = bookmark_interval
        self.cert_file: str | None = None
        self.key_file: str | None = None
        self._log_provider: LogProvider | None = None
        self._server: ThreadingServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._cache: dict[Any, tuple[int, Any]] = {}

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def register_log_provider(self, fn: LogProvider) -> None:
        """``fn(namespace, pod, container, follow, tail_lines, limit_bytes, timestamps, previous,
        stop_event) -> Iterator[bytes]`` serves ``pods/{name}/log``."""
        self._log_provider = fn

    def start(self) -> None:
        ctx = None
        if self.tls:
            self.cert_file, self.key_file = make_self_signed(self.host)
            ctx = server_context(self.cert_file, self.key_file)
        self._server = ThreadingServer((self.host, self.port), self._app, ctx)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="apiserver",
            daemon=True,
        )
        self._thread.start()
        log.info("API server listening on %s", self.url)

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.stopping = True
            self.registry.drop_watches("server stopping")
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.registry.stop()

    def __enter__(self) -> APIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ request entry point
    def _app(self, req: Request, resp: Responder) -> None:
        started = time.monotonic()
        try:
            self._authenticate(req)
            if req.path != FAULTS_PATH:
                self.faults.before_request()
            self._route(req, resp)
        except StatusError as e:
            self._send_error(resp, e)
        except ClientGone:
            raise
        except Exception as e:  # a bug must become a 500 Status, never a dropped connection
            log.exception("internal error serving %s %s", req.method, req.raw_target)
            self._send_error(resp, errors.internal_error(str(e)))
        finally:
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s %s -> %s (%.1f ms) [%s]",
                    req.method, req.raw_target, resp.status, (time.monotonic() - started) * 1000, req.header("user-agent"),
                )  # fmt: skip

    def _send_error(self, resp: Responder, e: StatusError) -> None:
        if resp.started:
            return
        headers = [("Retry-After", str(e.retry_after))] if e.retry_after is not None else []
        resp.send(e.code, _dumps(e.status), headers=headers)

    def _authenticate(self, req: Request) -> None:
        if not (self.tls and self.token):
            return
        auth = req.header("authorization")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(value.strip(), self.token):
            raise errors.unauthorized()

    def _route(self, req: Request, resp: Responder) -> None:
        path = req.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        if path == FAULTS_PATH:
            return self._faults(req, resp)
        if path == "/version":
            return self._json(resp, discovery.VERSION_INFO)
        if path in ("/healthz", "/readyz", "/livez"):
            return resp.send(200, b"ok", "text/plain; charset=utf-8")
        if parts[:1] == ["openapi"]:
            return self._openapi(req, resp, parts)
        if parts[:1] == ["api"]:
            if len(parts) == 1:
                return self._discovery_root(req, resp, core=True)
            if parts[1] != "v1":
                raise errors.resource_not_found()
            if len(parts) == 2:
                return self._resource_list(req, resp, "", "v1")
            return self._resource(req, resp, "", "v1", parts[2:])
        if parts[:1] == ["apis"]:
            if len(parts) == 1:
                return self._discovery_root(req, resp, core=False)
            if len(parts) == 2:
                doc = discovery.api_group(self.registry.resource_types(), parts[1])
                if doc is None:
                    raise errors.resource_not_found()
                return self._json(resp, doc)
            if len(parts) == 3:
                return self._resource_list(req, resp, parts[1], parts[2])
            return self._resource(req, resp, parts[1], parts[2], parts[3:])
        raise errors.resource_not_found()

    def _json(
        self,
        resp: Responder,
        obj: Any,
        code: int = 200,
        content_type: str = "application/json",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        resp.send(code, _dumps(obj), content_type, headers)

    def _written(
        self, resp: Responder, write: Callable[[], Any], req: Request, code: int = 200
    ) -> None:
        """Run a write under the request's ``fieldValidation`` mode and reply with the object
        (plus ``Warning`` headers). ``write`` may return ``(obj, created)``."""
        mode = req.query.get("fieldValidation") or None
        if mode not in (None, "Strict", "Warn", "Ignore"):
            raise errors.bad_request(
                f"fieldValidation must be Ignore, Warn or Strict, not {mode!r}"
            )
        with self.registry.field_validation(mode) as warnings:
            result = write()
        if isinstance(result, tuple):
            result, created = result
            code = 201 if created else code
        headers = [("Warning", '299 - "' + w.replace('"', "'") + '"') for w in warnings]
        self._json(resp, result, code, headers=headers)

    # ------------------------------------------------------------------ admin
    def _faults(self, req: Request, resp: Responder) -> None:
        if req.method == "GET":
            return self._json(resp, self.faults.to_dict())
        if req.method != "POST":
            raise errors.method_not_allowed()
        body = self._parse_json(req.body) if req.body else {}
        if not isinstance(body, dict):
            raise errors.bad_request("fault settings must be a JSON object")
        self._json(resp, self.faults.apply(body))

    # ------------------------------------------------------------------ discovery
    def _cached(self, key: Any, build: Callable[[], Any]) -> Any:
        gen = self.registry.types_generation
        hit = self._cache.get(key)
        if hit is not None and hit[0] == gen:
            return hit[1]
        value = build()
        self._cache[key] = (gen, value)
        return value

    def _discovery_root(self, req: Request, resp: Responder, core: bool) -> None:
        types = self.registry.resource_types()
        agg = discovery.negotiate_aggregated(req.header("accept"))
        if agg:
            body = self._cached(
                ("agg", core, agg), lambda: _dumps(discovery.aggregated(types, core, agg))
            )
            return resp.send(
                200,
                body,
                f"application/json;g=apidiscovery.k8s.io;v={agg};as=APIGroupDiscoveryList",
            )
        if core:
            return self._json(resp, discovery.api_versions(f"{self.host}:{self.port}"))
        self._json(resp, discovery.api_group_list(types))

    def _resource_list(self, req: Request, resp: Responder, group: str, version: str) -> None:
        doc = discovery.resource_list(self.registry.resource_types(), group, version)
        if doc is None:
            raise errors.resource_not_found()
        self._json(resp, doc)

    def _openapi(self, req: Request, resp: Responder, parts: list[str]) -> None:
        if len(parts) < 2 or parts[1] != "v3":
            raise errors.resource_not_found()
        types = self.registry.resource_types()
        if len(parts) == 2:
            return resp.send(
                200, self._cached("openapi-index", lambda: _dumps(discovery.openapi_index(types)))
            )
        rest = parts[2:]
        if rest[0] == "api" and len(rest) == 2:
            group, version = "", rest[1]
        elif rest[0] == "apis" and len(rest) == 3:
            group, version = rest[1], rest[2]
        else:
            raise errors.resource_not_found()
        doc = self._cached(
            ("openapi", group, version), lambda: discovery.openapi_document(types, group, version)
        )
        if doc is None:
            raise errors.resource_not_found()
        self._json(resp, doc)

    # ------------------------------------------------------------------ REST
    def _resource(
        self, req: Request, resp: Responder, group: str, version: str, rest: list[str]
    ) -> None:
        if rest[0] == "watch":
            req.query["watch"] = "true"
            rest = rest[1:]
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise errors.resource_not_found()
        plural = rest[0]
        rt = self.registry.resolve((group, version, plural))
        if namespace is not None and not rt.namespaced:
            raise errors.resource_not_found()
        if namespace is None and rt.namespaced and len(rest) > 1:
            raise errors.resource_not_found()
        gvr = (group, version, plural)
        if len(rest) == 1:
            return self._collection(req, resp, rt, gvr, namespace)
        name = rest[1]
        sub = rest[2] if len(rest) == 3 else None
        if sub is not None and sub not in rt.subresources:
            raise errors.resource_not_found()
        if sub == "log":
            return self._pod_log(req, resp, namespace or "", name)
        if sub == "binding":
            return self._binding(req, resp, namespace or "", name)
        self._item(req, resp, rt, gvr, namespace, name, sub)

    def _collection(
        self, req: Request, resp: Responder, rt: ResourceType, gvr: tuple, namespace: str | None
    ) -> None:
        q = req.query
        if req.method == "GET":
            if _bool(q.get("watch")):
                return self._watch(req, resp, rt, gvr, namespace)
            limit = _int(q.get("limit"), "limit")
            if q.get("resourceVersion") == "0" and not q.get("continue"):
                limit = None
            items, rv, token, remaining = self.registry._list(
                gvr,
                namespace,
                q.get("labelSelector"),
                q.get("fieldSelector"),
                limit,
                q.get("continue") or None,
            )
            list_meta: dict[str, Any] = {"resourceVersion": rv}
            if token:
                list_meta["continue"] = token
                if remaining is not None:
                    list_meta["remainingItemCount"] = remaining
            if tables.wants_table(req.header("accept")):
                body = tables.table(
                    rt, gvr[1], items, list_meta, q.get("includeObject", "Metadata")
                )
                return self._json(resp, body, content_type=tables.TABLE_CONTENT_TYPE)
            return self._json(
                resp,
                {
                    "kind": rt.list_kind,
                    "apiVersion": rt.api_version(gvr[1]),
                    "metadata": list_meta,
                    "items": items,
                },
            )
        if req.method == "POST":
            body = self._parse_body(req)
            dry = self._dry_run(req)
            return self._written(
                resp, lambda: self.registry._create(gvr, namespace, body, dry), req, 201
            )
        if req.method == "DELETE":
            opts = self._delete_options(req)
            items = self.registry.delete_collection(
                gvr,
                namespace,
                q.get("labelSelector"),
                q.get("fieldSelector"),
                opts["grace"],
                opts["propagation"],
                opts["dry_run"],
            )
            return self._json(
                resp,
                {
                    "kind": rt.list_kind,
                    "apiVersion": rt.api_version(gvr[1]),
                    "metadata": {"resourceVersion": str(self.registry.resource_version)},
                    "items": items,
                },
            )
        raise errors.method_not_allowed()

    def _item(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple,
        namespace: str | None,
        name: str,
        sub: str | None,
    ) -> None:
        reg = self.registry
        if req.method == "GET":
            obj = reg._get(gvr, namespace, name)
            if tables.wants_table(req.header("accept")):
                body = tables.table(
                    rt,
                    gvr[1],
                    [obj],
                    {"resourceVersion": meta(obj).get("resourceVersion", "")},
                    req.query.get("includeObject", "Metadata"),
                )
                return self._json(resp, body, content_type=tables.TABLE_CONTENT_TYPE)
            return self._json(resp, obj)
        if req.method == "PUT":
            body = self._parse_body(req)
            dry = self._dry_run(req)
            return self._written(
                resp, lambda: reg._update(gvr, namespace, name, body, sub, dry), req
            )
        if req.method == "PATCH":
            ctype = req.header("content-type").split(";")[0].strip().lower()
            patch_type = _PATCH_TYPES.get(ctype)
            if patch_type is None:
                raise errors.unsupported_media_type(
                    f"the body of the request was in an unknown format - accepted media types include: {', '.join(_PATCH_TYPES)}"
                )
            if patch_type == "apply":
                patch = self._parse_yaml(req.body)
            else:
                patch = self._parse_json(req.body)
            if patch_type == "strategic" and rt.is_custom:
                raise errors.unsupported_media_type(
                    f"{ctype} is not supported by {rt.group}/{gvr[1]}, Kind={rt.kind}: the body of the request was in an unknown "
                    "format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                )
            manager = req.query.get("fieldManager") or None
            dry, force = self._dry_run(req), _bool(req.query.get("force"))
            return self._written(
                resp,
                lambda: reg._patch(
                    gvr, namespace, name, patch, patch_type, sub, dry, manager, force
                ),
                req,
            )
        if req.method == "DELETE" and sub is None:
            opts = self._delete_options(req)
            obj = reg._delete(
                gvr,
                namespace,
                name,
                opts["grace"],
                opts["propagation"],
                opts["preconditions"],
                opts["dry_run"],
            )
            return self._json(resp, obj)
        raise errors.method_not_allowed()

    # ------------------------------------------------------------------ bodies and options
    def _parse_json(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise errors.bad_request(
                f"the body of the request could not be decoded as JSON: {e}"
            ) from e

    def _parse_yaml(self, raw: bytes) -> Any:
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise errors.bad_request(f"error decoding YAML: {e}") from e

    def _parse_body(self, req: Request) -> Any:
        if not req.body:
            raise errors.bad_request("the request body is empty")
        ctype = req.header("content-type").lower()
        if ctype.startswith(protobuf.CONTENT_TYPE):
            return protobuf.decode(req.body)
        if "yaml" in ctype:
            return self._parse_yaml(req.body)
        return self._parse_json(req.body)

    def _dry_run(self, req: Request) -> bool:
        value = req.query.get("dryRun")
        if value and value != "All":
            raise errors.bad_request(f'Invalid value: "{value}": supported values: "All"')
        return value == "All"

    def _delete_options(self, req: Request) -> dict[str, Any]:
        body: dict = {}
        if req.body and req.body.strip():
            parsed = self._parse_json(req.body)
            if not isinstance(parsed, dict):
                raise errors.bad_request("DeleteOptions must be a JSON object")
            body = parsed
        q = req.query
        grace = body.get("gracePeriodSeconds")
        if grace is None:
            grace = _int(q.get("gracePeriodSeconds"), "gracePeriodSeconds")
        propagation = body.get("propagationPolicy") or q.get("propagationPolicy") or None
        orphan = body.get("orphanDependents")
        if orphan is None and q.get("orphanDependents"):
            orphan = _bool(q.get("orphanDependents"))
        if propagation is None and orphan is not None:
            propagation = "Orphan" if orphan else "Background"
        dry = body.get("dryRun") or ([q["dryRun"]] if q.get("dryRun") else [])
        return {
            "grace": int(grace) if grace is not None else None,
            "propagation": propagation,
            "preconditions": body.get("preconditions"),
            "dry_run": "All" in dry,
        }

    # ------------------------------------------------------------------ watch
    def _watch(
        self, req: Request, resp: Responder, rt: ResourceType, gvr: tuple, namespace: str | None
    ) -> None:
        q = req.query
        timeout = _int(q.get("timeoutSeconds"), "timeoutSeconds")
        bookmarks = _bool(q.get("allowWatchBookmarks"))
        as_table = tables.wants_table(req.header("accept"))
        try:
            w = self.registry.watch(
                gvr,
                namespace,
                q.get("resourceVersion") or None,
                q.get("labelSelector"),
                q.get("fieldSelector"),
            )
        except StatusError as e:
            if e.code != 410:
                raise
            resp.start_stream()
            resp.chunk(_dumps({"type": "ERROR", "object": e.status}) + b"\n")
            resp.end_stream()
            return
        content_type = tables.TABLE_CONTENT_TYPE if as_table else "application/json"
        deadline = time.monotonic() + (timeout if timeout and timeout > 0 else MAX_WATCH_SECONDS)
        next_bookmark = time.monotonic() + self.bookmark_interval
        api_version = rt.api_version(gvr[1])
        last_send = 0.0
        try:
            resp.start_stream(content_type=content_type)
            while not self._stopping.is_set():
                # Under load, write at most one batch per WATCH_BATCH_INTERVAL: pausing *before*
                # waiting means one wake-up and one write per batch instead of per event.
                pause = last_send + WATCH_BATCH_INTERVAL - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                now = time.monotonic()
                if now >= deadline:
                    break
                item = w.next_event(
                    min(1.0, deadline - now, max(0.01, next_bookmark - now) if bookmarks else 1.0)
                )
                if item is not None:
                    last_send = time.monotonic()
                    batch = [item]
                    while len(batch) < 1000 and (more := w.next_event(0)) is not None:
                        batch.append(more)
                    resp.chunk(
                        b"".join(
                            self._encode_event(rt, gvr, etype, ev, as_table, api_version)
                            for etype, ev in batch
                        )
                    )
                    continue
                if w.closed:
                    break
                if bookmarks and time.monotonic() >= next_bookmark:
                    next_bookmark = time.monotonic() + self.bookmark_interval
                    rv = self.registry.bookmark_rv(w)
                    if rv is not None:
                        obj = {
                            "kind": rt.kind,
                            "apiVersion": api_version,
                            "metadata": {"resourceVersion": str(rv)},
                        }
                        resp.chunk(_dumps({"type": "BOOKMARK", "object": obj}) + b"\n")
                elif resp.client_gone():
                    break
        except ClientGone:
            pass
        finally:
            w.stop()
        resp.end_stream()

    def _encode_event(
        self, rt: ResourceType, gvr: tuple, etype: str, ev: Any, as_table: bool, api_version: str
    ) -> bytes:
        key = (etype, api_version, as_table)
        data = ev.cache.get(key)
        if data is None:
            obj = self.registry._present(rt, gvr[1], ev.obj)
            if as_table:
                obj = tables.table(
                    rt, gvr[1], [obj], {"resourceVersion": meta(obj).get("resourceVersion", "")}
                )
            data = _dumps({"type": etype, "object": obj}) + b"\n"
            ev.cache[key] = data
        return data

    # ------------------------------------------------------------------ pods
    def _binding(self, req: Request, resp: Responder, namespace: str, name: str) -> None:
        if req.method != "POST":
            raise errors.method_not_allowed()
        body = self._parse_body(req)
        target = (body.get("target") or {}) if isinstance(body, dict) else {}
        if not target.get("name"):
            raise errors.invalid(
                "Binding",
                "",
                "bindings",
                name,
                [errors.field_cause("target.name", "Required value", "FieldValueRequired")],
            )
        self.registry._bind_pod(namespace, name, target["name"])
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
        self._json(resp, status, 201)

    def _pod_log(self, req: Request, resp: Responder, namespace: str, name: str) -> None:
        if req.method != "GET":
            raise errors.method_not_allowed()
        pod = self.registry._get(("", "v1", "pods"), namespace, name)
        q = req.query
        container = q.get("container") or self._default_container(pod, name)
        names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        names += [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
        if container not in names:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        follow = _bool(q.get("follow"))
        tail = _int(q.get("tailLines"), "tailLines")
        limit = _int(q.get("limitBytes"), "limitBytes")
        stop = threading.Event()
        if self._log_provider is None:
            chunks: Iterator[bytes] = iter(())
        else:
            chunks = self._log_provider(
                namespace,
                name,
                container,
                follow,
                tail,
                limit,
                _bool(q.get("timestamps")),
                _bool(q.get("previous")),
                stop,
            )
        if not follow:
            try:
                data = b"".join(chunks)
            finally:
                stop.set()
            return resp.send(200, data[:limit] if limit else data, "text/plain")
        sent = 0
        try:
            resp.start_stream(content_type="text/plain")
            for chunk in chunks:
                if self._stopping.is_set():
                    break
                if limit is not None:
                    chunk = chunk[: max(0, limit - sent)]
                resp.chunk(chunk)
                sent += len(chunk)
                if limit is not None and sent >= limit:
                    break
        except ClientGone:
            pass
        finally:
            stop.set()
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        resp.end_stream()

    def _default_container(self, pod: dict, name: str) -> str:
        annotated = (meta(pod).get("annotations") or {}).get(
            "kubectl.kubernetes.io/default-container"
        )
        if annotated:
            return annotated
        names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        if len(names) == 1:
            return names[0]
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        )


def kubeconfig(server: APIServer, context: str = "localcluster") -> dict:
    """A kubeconfig dict (for ``yaml.safe_dump``) that reaches ``server``."""
    cluster: dict[str, Any] = {"server": server.url}
    if server.tls and server.cert_file:
        cluster["certificate-authority"] = server.cert_file
    user: dict[str, Any] = {"token": server.token} if server.token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": user}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": context, "namespace": "default"},
            }
        ],
        "current-context": context,
    }


__all__ = ["APIServer", "kubeconfig"]
