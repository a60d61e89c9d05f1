"""``APIServer``: the Kubernetes REST API over HTTP(S) in front of a ``Registry``.

Request flow: ``httpcore`` parses the request; ``_app`` authenticates and authorizes it
(``auth``: bearer tokens, impersonation, RBAC), applies injected faults, routes by path to
discovery/OpenAPI/version handlers or to the REST handlers, and turns any ``StatusError`` into a
``Status`` reply.

Listeners: the main one serves ``url`` (HTTPS with ``tls=True``). Without a token it is open:
requests without credentials run as the ``system:unsecured`` superuser, like kube-apiserver's old
insecure port, so it refuses a non-loopback address unless ``insecure=True``. With a token (or
TLS, which always has one) requests without credentials are ``system:anonymous`` and RBAC allows
them only ``/healthz``, ``/livez``, ``/readyz`` and ``/version``. ``secure_port`` adds an HTTPS
listener for in-cluster clients (service-account tokens; anonymous is ``system:anonymous``) and
the ``kubernetes`` Service and Endpoints in ``default`` that point at it. Watches and ``log?follow=true``
stream chunked JSON/text from their connection's thread; every other reply is one JSON body with
``Content-Type: application/json`` (or a Table when kubectl asks for one).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import secrets
import ssl
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from localcluster.apimachinery import errors, selectors
from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated import crds
from localcluster.controlplane.emulated.auth import bootstrap
from localcluster.controlplane.emulated.auth.admission import (
    PriorityClassAdmission,
    ServiceAccountAdmission,
)
from localcluster.controlplane.emulated.auth.authenticator import UNSECURED_USER
from localcluster.controlplane.emulated.auth.filters import RequestAuth
from localcluster.controlplane.emulated.auth.reviews import REVIEW_KINDS
from localcluster.controlplane.emulated.auth.tokenrequest import create_token
from localcluster.controlplane.emulated.auth.user import UserInfo, anonymous_user
from localcluster.controlplane.emulated.eviction import evict
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.resources import ResourceType
from localcluster.controlplane.emulated.serving import discovery, params, tables
from localcluster.controlplane.emulated.serving.faults import Faults
from localcluster.controlplane.emulated.serving.httpcore import (
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    MAX_BODY,
    ClientGone,
    Request,
    Responder,
    ThreadingServer,
)
from localcluster.controlplane.emulated.serving.kubeconfig import CONTEXT_NAME, kubeconfig_document
from localcluster.controlplane.emulated.serving.request_metrics import RequestMetrics
from localcluster.controlplane.emulated.serving.streams import (
    LogProvider,
    WatchStream,
    dumps,
    serve_pod_log,
)
from localcluster.controlplane.emulated.serving.tls import make_self_signed, server_context

log = logging.getLogger(__name__)

FAULTS_PATH = "/_localcluster/faults"
# Optional admission plugins (kube-apiserver enables ServiceAccount by default; it needs the
# controller that creates each namespace's ``default`` account, so a bare server leaves it off,
# as envtest does, and ``LocalCluster`` turns it on).
# Priority (but for its refusal of a missing class, always on) and DefaultTolerationSeconds
# are not among them: divergence D192
ADMISSION_PLUGINS = ("ServiceAccount",)
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


_request_user: ContextVar[UserInfo | None] = ContextVar("localcluster_request_user", default=None)


def request_user() -> UserInfo | None:
    """Who made the request this thread is serving (None outside one: a controller of the
    cluster itself). kube-apiserver's ``request.UserFrom(ctx)``; a registry commit runs on
    the thread of the request that made it, so a commit observer can tell who wrote."""
    return _request_user.get()


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
        header_timeout: float = HEADER_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        secure_port: int | None = None,
        authorization_mode: str = "RBAC",
        insecure: bool = False,
        admission_plugins: tuple[str, ...] = (),
    ) -> None:
        self.host = host
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.port = port
        self.tls = tls
        self.token = token if token or not tls else secrets.token_hex(16)
        self.admin_token = self.token or secrets.token_hex(16)
        self.secure_port = secure_port
        self._insecure = insecure
        self._owns_registry = registry is None
        self.registry = registry or Registry(watch_history=watch_history)
        self.auth = RequestAuth(self.registry, self.admin_token, authorization_mode)
        unknown = set(admission_plugins) - set(ADMISSION_PLUGINS)
        if unknown:
            raise ValueError(
                f"unknown admission plugins {sorted(unknown)}; known: {ADMISSION_PLUGINS}"
            )
        if "ServiceAccount" in admission_plugins and not any(
            isinstance(p, ServiceAccountAdmission) for p in self.registry.admission
        ):
            self.registry.admission.append(ServiceAccountAdmission(self.registry))
        # kube-apiserver's Priority plugin is on by default: its refusal of a missing class is
        # always played (its priority defaulting is not: D192)
        if not any(isinstance(p, PriorityClassAdmission) for p in self.registry.admission):
            self.registry.admission.append(PriorityClassAdmission(self.registry))
        self.faults = Faults(self.registry, **(faults or {}))
        self.request_metrics = RequestMetrics()
        self.cert_file: str | None = None
        self.key_file: str | None = None
        self._log_provider: LogProvider | None = None
        self._server: ThreadingServer | None = None
        self._secure_server: ThreadingServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._watches = WatchStream(self.registry, self._stopping, bookmark_interval)
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

    @property
    def secure_url(self) -> str | None:
        """The HTTPS address in-cluster clients use (the main one with ``tls=True``)."""
        if self.tls:
            return self.url
        if self._secure_server is None:
            return None
        return f"https://{self.host}:{self.secure_port}"

    def start(self) -> None:
        """Listen (again, after ``stop``); a registry shared with an earlier server keeps its data."""
        if not (self.token or self._insecure or _is_loopback(self.host)):
            raise ValueError(
                f"refusing to serve an open API server on {self.host}: set a token "
                "(or TLS), or pass insecure=True"
            )
        self._stopping.clear()
        self.registry.gc.start()
        bootstrap.ensure(self.registry)
        ctx = None
        if self.tls or self.secure_port is not None:
            self.cert_file, self.key_file = make_self_signed(self.host)
            ctx = server_context(self.cert_file, self.key_file)
        self._server = self._listen(self.port, ctx if self.tls else None, secure=self.tls)
        self.port = self._server.server_address[1]
        if self.secure_port is not None and not self.tls:
            self._secure_server = self._listen(self.secure_port, ctx, secure=True)
            self.secure_port = self._secure_server.server_address[1]
        if self.secure_url is not None:
            bootstrap.ensure_kubernetes_service(self.registry, self.host, self.secure_url)
        log.info("API server listening on %s", self.url)

    def _listen(self, port: int, ctx: ssl.SSLContext | None, secure: bool) -> ThreadingServer:
        server = ThreadingServer(
            (self.host, port),
            functools.partial(self._app, secure=secure),
            ctx,
            header_timeout=self.header_timeout,
            idle_timeout=self.idle_timeout,
        )
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="apiserver-secure" if secure else "apiserver",
            daemon=True,
        )
        self._thread.start()
        return server

    def stop(self) -> None:
        self._stopping.set()
        servers = [s for s in (self._server, self._secure_server) if s is not None]
        for server in servers:
            server.stopping = True
        if servers:
            self.registry.drop_watches("server stopping")
        for server in servers:
            server.shutdown()
            server.server_close()
            server.close_connections()
        self._server = self._secure_server = None
        if self._owns_registry:
            self.registry.stop()

    def __enter__(self) -> APIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ request entry point
    def _app(self, req: Request, resp: Responder, secure: bool = False) -> None:
        started = time.monotonic()
        user_token = _request_user.set(None)
        try:
            open_listener = not (secure or self.token)
            anonymous = UNSECURED_USER if open_listener else anonymous_user()
            user = req.extra["user"] = self.auth.admit(req, anonymous)
            _request_user.set(user)
            if req.body_too_large:
                raise errors.request_entity_too_large(f"limit is {MAX_BODY}")
            if req.path != FAULTS_PATH:
                self.faults.before_request(user.name, req.method, req.path)
            self._route(req, resp)
        except StatusError as e:
            self._send_error(resp, e)
        except ClientGone:
            raise
        except Exception as e:  # a bug must become a 500 Status, never a dropped connection
            log.exception("internal error serving %s %s", req.method, req.raw_target)
            self._send_error(resp, errors.internal_error(str(e)))
        finally:
            _request_user.reset(user_token)
            self.request_metrics.observe(
                req.header("user-agent"), req.method, req.path, req.query, resp.status
            )
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s %s -> %s (%.1f ms) [%s]",
                    req.method, req.raw_target, resp.status, (time.monotonic() - started) * 1000, req.header("user-agent"),
                )  # fmt: skip

    def _send_error(self, resp: Responder, e: StatusError) -> None:
        if resp.started:
            return
        headers = [("Retry-After", str(e.retry_after))] if e.retry_after is not None else []
        headers += [("Warning", _warning_header(w)) for w in e.warnings]
        resp.send(e.code, dumps(e.status), headers=headers)

    def _route(self, req: Request, resp: Responder) -> None:
        path = req.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        if path == FAULTS_PATH:
            return self._faults(req, resp)
        if path == "/version":
            return self._json(resp, discovery.VERSION_INFO)
        if path in ("/healthz", "/readyz", "/livez"):
            return resp.send(200, b"ok", "text/plain; charset=utf-8")
        if path == "/metrics":
            return resp.send(200, self.request_metrics.render(), METRICS_CONTENT_TYPE)
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
            try:
                if len(parts) == 2:
                    doc = discovery.api_group(self.registry.resource_types(), parts[1])
                    if doc is None:
                        raise errors.resource_not_found()
                    return self._json(resp, doc)
                if len(parts) == 3:
                    return self._resource_list(req, resp, parts[1], parts[2])
                return self._resource(req, resp, parts[1], parts[2], parts[3:])
            except StatusError as e:
                if e.message != errors.NO_RESOURCE or self._builtin_group(parts[1]):
                    raise
                # no built-in handler owns the group: kube-apiserver's last handler answers
                return resp.send(404, b"404 page not found\n", "text/plain; charset=utf-8")
        raise errors.resource_not_found()

    def _builtin_group(self, group: str) -> bool:
        return any(t.group == group and not t.is_custom for t in self.registry.resource_types())

    def _json(
        self,
        resp: Responder,
        obj: Any,
        code: int = 200,
        content_type: str = "application/json",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        resp.send(code, dumps(obj), content_type, headers)

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
        # no mode is Warn, as in kube-apiserver since 1.27
        with self.registry.field_validation(mode or "Warn") as warnings:
            try:
                result = write()
            except StatusError as e:  # a refused write still carries its warnings
                e.warnings = list(warnings)
                raise
        if isinstance(result, tuple):
            result, created = result
            code = 201 if created else code
        headers = [("Warning", _warning_header(w)) for w in warnings]
        self._json(resp, result, code, headers=headers)

    # ------------------------------------------------------------------ admin
    def _faults(self, req: Request, resp: Responder) -> None:
        if req.method == "GET":
            return self._json(resp, self.faults.to_dict())
        if req.method != "POST":
            raise errors.method_not_allowed()
        body = params.parse_json(req.body) if req.body else {}
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
                ("agg", core, agg), lambda: dumps(discovery.aggregated(types, core, agg))
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
                200, self._cached("openapi-index", lambda: dumps(discovery.openapi_index(types)))
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
        if (group, plural) in REVIEW_KINDS and len(rest) == 1:
            return self._review(req, resp, group, version, plural, namespace)
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
            if rt.is_custom:  # the custom resource handler names the object it did not find
                raise errors.not_found(rt.group, rt.plural, name)
            raise errors.resource_not_found()
        if sub == "log":
            return serve_pod_log(
                self.registry, self._log_provider, self._stopping, req, resp, namespace or "", name
            )
        if sub == "binding":
            return self._binding(req, resp, namespace or "", name)
        if sub == "token":
            return self._token_request(req, resp, namespace or "", name)
        if sub == "eviction":
            return self._eviction(req, resp, namespace or "", name)
        if sub == "scale":
            return self._scale(req, resp, gvr, namespace, name)
        self._item(req, resp, rt, gvr, namespace, name, sub)

    def _collection(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple[Any, ...],
        namespace: str | None,
    ) -> None:
        if req.method in ("GET", "DELETE"):
            selectors.check_field_selector(
                rt.storage_key,
                rt.is_custom,
                req.query.get("fieldSelector"),
                crds.selectable_fields(rt.crd, gvr[1]) if rt.is_custom else frozenset(),
            )
        if req.method == "GET":
            watch = params.as_bool(req.query.get("watch"))
            params.resource_version(req, listing=not watch)
            params.check_list_options(req, watch)
            if watch:
                return self._watches.serve(req, resp, rt, gvr, namespace)
            return self._list(req, resp, rt, gvr, namespace)
        if req.method == "POST":
            body = params.object_body(req, rt.kind, rt.is_custom)
            dry = params.dry_run(req)
            return self._written(
                resp, lambda: self.registry.create_shared(gvr, namespace, body, dry), req, 201
            )
        if req.method == "DELETE":
            return self._delete_collection(req, resp, rt, gvr, namespace)
        raise errors.method_not_allowed()

    def _list(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple[Any, ...],
        namespace: str | None,
    ) -> None:
        q = req.query
        limit, continue_token, exact_rv = params.list_reading(req)
        items, rv, token, remaining = self.registry.list_page(
            gvr,
            namespace,
            q.get("labelSelector"),
            q.get("fieldSelector"),
            limit,
            continue_token,
            exact_rv,
        )
        list_meta: dict[str, Any] = {"resourceVersion": rv}
        if token:
            list_meta["continue"] = token
            if remaining is not None:
                list_meta["remainingItemCount"] = remaining
        if rt.is_custom:  # an unstructured list: continue always set, keys in Go's map order
            list_meta = dict(sorted({"continue": "", **list_meta}.items()))
        if tables.wants_table(req.header("accept")):
            return self._table(req, resp, rt, gvr[1], items, list_meta)
        self._json(resp, _list_object(rt, gvr[1], list_meta, items))

    def _delete_collection(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple[Any, ...],
        namespace: str | None,
    ) -> None:
        opts = params.delete_options(req)
        items = self.registry.delete_collection(
            gvr,
            namespace,
            req.query.get("labelSelector"),
            req.query.get("fieldSelector"),
            opts["grace"],
            opts["propagation"],
            opts["dry_run"],
        )
        list_meta = {"resourceVersion": str(self.registry.resource_version)}
        self._json(resp, _list_object(rt, gvr[1], list_meta, items))

    def _table(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        version: str,
        items: list[dict[str, Any]],
        list_meta: dict[str, Any],
    ) -> None:
        """Reply with a meta.k8s.io Table (what kubectl get asks for)."""
        include = req.query.get("includeObject", "Metadata")
        body = tables.table(rt, version, items, list_meta, include)
        self._json(resp, body, content_type=tables.TABLE_CONTENT_TYPE)

    def _item(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple[Any, ...],
        namespace: str | None,
        name: str,
        sub: str | None,
    ) -> None:
        reg = self.registry
        if req.method == "GET":
            params.resource_version(req)
            obj = reg.get_shared(gvr, namespace, name)
            if tables.wants_table(req.header("accept")):
                list_meta = {"resourceVersion": meta(obj).get("resourceVersion", "")}
                return self._table(req, resp, rt, gvr[1], [obj], list_meta)
            return self._json(resp, obj)
        if req.method == "PUT":
            body = params.object_body(req, rt.kind, rt.is_custom)
            dry = params.dry_run(req)
            return self._written(
                resp, lambda: reg.update_shared(gvr, namespace, name, body, sub, dry), req
            )
        if req.method == "PATCH":
            patch_type, patch = params.patch_body(req, rt.is_custom)
            manager = req.query.get("fieldManager") or None
            dry, force = params.dry_run(req), params.as_bool(req.query.get("force"))
            return self._written(
                resp,
                lambda: reg.patch_shared(
                    gvr, namespace, name, patch, patch_type, sub, dry, manager, force
                ),
                req,
            )
        if req.method == "DELETE" and sub is None:
            opts = params.delete_options(req)
            obj = reg.delete_shared(
                gvr,
                namespace,
                name,
                opts["grace"],
                opts["propagation"],
                opts["preconditions"],
                opts["dry_run"],
            )
            return self._json(resp, deleted_answer(rt, obj))
        raise errors.method_not_allowed()

    def _scale(
        self, req: Request, resp: Responder, gvr: tuple[Any, ...], namespace: str | None, name: str
    ) -> None:
        reg = self.registry
        if req.method == "GET":
            return self._json(resp, reg.get_scale(gvr, namespace, name))
        if req.method == "PUT":
            return self._json(
                resp,
                reg.update_scale(
                    gvr, namespace, name, params.object_body(req, "Scale"), params.dry_run(req)
                ),
            )
        if req.method == "PATCH":
            patch_type, patch = params.patch_body(req, reg.resolve(gvr).is_custom)
            return self._json(
                resp, reg.patch_scale(gvr, namespace, name, patch, patch_type, params.dry_run(req))
            )
        raise errors.method_not_allowed()

    # ------------------------------------------------------------------ pods
    def _binding(self, req: Request, resp: Responder, namespace: str, name: str) -> None:
        if req.method != "POST":
            raise errors.method_not_allowed()
        body = params.object_body(req, "Binding")
        target = (body.get("target") or {}) if isinstance(body, dict) else {}
        if not target.get("name"):
            cause = errors.field_cause("target.name", "Required value", "FieldValueRequired")
            raise errors.invalid("Binding", "", "bindings", name, [cause])
        self.registry.bind_pod_shared(namespace, name, target["name"])
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
        self._json(resp, status, 201)

    def _eviction(self, req: Request, resp: Responder, namespace: str, name: str) -> None:
        if req.method != "POST":  # a create-only subresource: kube-apiserver's empty details
            e = errors.method_not_allowed()
            e.status["details"] = {}
            raise e
        body = params.object_body(req, "Eviction")
        dry = ["All"] if params.dry_run(req) else []
        status = evict(self.registry, namespace, name, body, dry)
        self._json(resp, status, int(status["code"]))

    # ------------------------------------------------------------------ auth APIs
    def _review(
        self,
        req: Request,
        resp: Responder,
        group: str,
        version: str,
        plural: str,
        namespace: str | None,
    ) -> None:
        self.registry.resolve((group, version, plural))
        if req.method != "POST":
            raise errors.method_not_allowed()
        user: UserInfo = req.extra["user"]
        body = params.object_body(req, REVIEW_KINDS[(group, plural)][0])
        self._json(
            resp, self.auth.reviews.create(group, plural, version, body, user, namespace), 201
        )

    def _token_request(self, req: Request, resp: Responder, namespace: str, name: str) -> None:
        if req.method != "POST":
            raise errors.method_not_allowed()
        body = params.object_body(req, "TokenRequest")
        token = create_token(
            self.registry, self.auth.tokens, namespace, name, body, self.registry.clock()
        )
        self._json(resp, token, 201)


def _warning_header(text: str) -> str:
    """A ``Warning`` header as kube-apiserver writes one: code 299, no agent, the text quoted
    with its backslashes and double quotes escaped."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def kubeconfig(server: APIServer, context: str = CONTEXT_NAME) -> dict[str, Any]:
    """A kubeconfig dict (for ``yaml.safe_dump``) that reaches ``server``."""
    ca_file = server.cert_file if server.tls else None
    return kubeconfig_document(server.url, server.token, ca_file, context=context)


def _list_object(
    rt: ResourceType, version: str, list_meta: dict[str, Any], items: list[dict[str, Any]]
) -> dict[str, Any]:
    """A list as kube-apiserver encodes it: a built-in kind's items are typed structs whose
    ``apiVersion`` and ``kind`` are empty and left out; a custom resource's items keep theirs."""
    if not rt.is_custom:
        items = [{k: v for k, v in item.items() if k not in _TYPE_META} for item in items]
    return {
        "kind": rt.list_kind,
        "apiVersion": rt.api_version(version),
        "metadata": list_meta,
        "items": items,
    }


_TYPE_META = ("apiVersion", "kind")
# Resources whose DELETE answers the deleted object even when it is gone at once
# (kube-apiserver's ReturnDeletedObject); every other one answers a Status naming it then.
_RETURNS_DELETED_OBJECT = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "namespaces"),
        ("", "serviceaccounts"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "podtemplates"),
        ("", "resourcequotas"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "volumeattachments"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "volumeattributesclasses"),
    }
)


def deleted_answer(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """What a DELETE answers: the object while its deletion is pending (finalizers, a grace
    period), or when its resource returns deleted objects; otherwise a Success Status whose
    details name the object, its group and its resource (in ``kind``, as the real one does)."""
    m = meta(obj)
    if m.get("deletionTimestamp") or (rt.group, rt.plural) in _RETURNS_DELETED_OBJECT:
        return obj
    if rt.group == "resource.k8s.io":
        return obj
    details: dict[str, Any] = {"name": m.get("name", "")}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    if m.get("uid"):
        details["uid"] = m["uid"]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


__all__ = ["APIServer", "kubeconfig"]
