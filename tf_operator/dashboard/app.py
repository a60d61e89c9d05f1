"""The dashboard's web application (Starlette): pages, event streams and the write endpoints.

It shows every job kind the cluster serves (TFJobs, PyTorchJobs, XGBoostJobs, JAXJobs,
PaddleJobs: :func:`.cache.served_kinds`), each through the SDK's :class:`~tf_operator.sdk.client.JobClient` of its kind; a job's address
names its kind by the plural, ``/namespaces/{ns}/{plural}/{name}`` (``tfjobs``,
``pytorchjobs``). Pages are rendered on the server from the informer caches (:mod:`.cache`).
Each page opens ONE server-sent-event stream (browsers allow only six connections per host, so
a job page multiplexes its replicas' logs into its own stream rather than opening one per pod):

* ``/namespaces/{ns}/stream``: ``reset`` (all rows) on connect, then ``upsert``/``delete`` of
  one row (keyed ``<plural>/<name>``), rendered on the server, whenever the informer sees a job
  change;
* ``/namespaces/{ns}/{plural}/{name}/stream``: ``detail`` (replicas, conditions, events) on
  connect and after every change to the job or its pods, ``log`` lines from each started
  replica (a follower thread per container run), ``deleted`` when the job goes.

Writes (create from YAML, suspend, resume, delete) exist only with ``allow_write``; a create
posted to ``/namespaces/{ns}/jobs`` makes a job of the kind its YAML names, one posted to a
kind's plural only a job of that kind. The guards of :mod:`.security` stand in front of every
request: the Host allow-list (DNS rebinding), the sign-in of a dashboard reachable from other
machines, and for writes the ``X-TFJob-Dashboard`` header, which a cross-site form cannot send,
and a same-origin ``Origin``/``Sec-Fetch-Site``. With Kubernetes sign-in, a page about every
kind shows only the kinds the caller may read, and a create by YAML is authorised on the kind
it names. Errors from the API server are returned verbatim (message and field causes) for the
page to show.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from importlib import resources
from typing import Any

import yaml
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tf_operator.dashboard import views
from tf_operator.dashboard.cache import Change, ClusterCache
from tf_operator.dashboard.security import (
    JOBS_GROUP,
    LOOPBACK_HOSTS,
    Authenticator,
    AuthMiddleware,
    Caller,
    cross_site_write,
)
from tf_operator.k8s import safeyaml
from tf_operator.k8s.client import NAMESPACES
from tf_operator.sdk import AlreadyExists, ApiError, Invalid, JobClient, NotFound, load_job
from tf_operator.sdk.kinds import KINDS, JobKindInfo
from tf_operator.sdk.logs import LogStream
from tf_operator.sdk.podgroup import POD_GROUP_RESOURCES
from tf_operator.version import __version__

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
LOG_TAIL_LINES = 200  # lines of each container's log sent when the page opens
MAX_FOLLOWED_PODS = 16  # replicas whose logs one job page streams
MAX_YAML_BYTES = 1 << 20
ANY_KIND = "jobs"  # a create posted here makes a job of the kind its YAML names


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class _Feed:
    """One browser's event stream: a queue filled from other threads."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    def push(self, item: Any) -> None:
        """Thread-safe; raises RuntimeError once the loop has closed."""
        self.loop.call_soon_threadsafe(self.queue.put_nowait, item)

    async def next_batch(self, timeout: float) -> list[Any]:
        """Everything queued (waiting up to ``timeout`` for the first item; [] if none)."""
        try:
            batch = [await asyncio.wait_for(self.queue.get(), timeout)]
        except TimeoutError:
            return []
        while not self.queue.empty():
            batch.append(self.queue.get_nowait())
        return batch


class _LogFollower:
    """Follows one container run's log in a thread, pushing ``("log", pod, line)``."""

    def __init__(self, stream: LogStream, feed: _Feed) -> None:
        self.stream = stream
        self.thread = threading.Thread(
            target=self._run, args=(feed,), name=f"dashboard log {stream.pod}", daemon=True
        )
        self.thread.start()

    def _run(self, feed: _Feed) -> None:
        try:
            for line in self.stream:
                feed.push(("log", self.stream.pod, line))
        except (ApiError, RuntimeError) as err:
            log.debug("log of %s ended: %s", self.stream.pod, err)

    def stop(self) -> None:
        self.stream.close()


class Dashboard:
    """Request handlers bound to a client per kind served (by plural), one cache and the
    server's settings."""

    def __init__(
        self,
        clients: Mapping[str, JobClient],
        cache: ClusterCache,
        allow_write: bool,
        default_namespace: str,
        prefix: str = "",
        authenticator: Authenticator | None = None,
    ) -> None:
        self.clients = dict(clients)
        self.cache = cache
        self.allow_write = allow_write
        self.default_namespace = default_namespace
        self.prefix = prefix
        self.authenticator = authenticator
        self.templates = Environment(
            loader=PackageLoader("tf_operator.dashboard", "templates"),
            autoescape=select_autoescape(["html"]),
        )
        kinds = [client.kind.kind for client in self.clients.values()]
        self.templates.globals.update(
            allow_write=allow_write,
            version=__version__,
            prefix=prefix,
            kinds=kinds,
            kinds_noun=" and ".join(f"{k}s" for k in kinds),
        )
        self.stopping = asyncio.Event()

    def _client(self, request: Request) -> JobClient | None:
        """The client of the kind the request's address names (None: a kind not served)."""
        return self.clients.get(request.path_params.get("plural", ""))

    async def _may(
        self, request: Request, verb: str, namespace: str, plural: str, group: str = JOBS_GROUP
    ) -> bool:
        """Whether the signed-in caller may ``verb`` this kind's jobs, or ``plural`` of
        ``group`` (always, without Kubernetes sign-in: the guards in front decided)."""
        caller = request.scope.get("state", {}).get("caller")
        if self.authenticator is None or not isinstance(caller, Caller):
            return True
        return bool(
            await run_in_threadpool(
                self.authenticator.authorize, caller, verb, namespace, plural, group
            )
        )

    async def _panes(self, request: Request, namespace: str) -> views.Panes:
        """Which of a job page's panes read from outside the job the caller may see: its
        events and its replicas' logs, each reviewed on exactly what it reads."""
        group = True
        for resource in POD_GROUP_RESOURCES:  # the group is found by listing each API
            group = group and await self._may(
                request, "list", namespace, resource.plural, group=resource.group
            )
        return views.Panes(
            events=await self._may(request, "list", namespace, "events", group=""),
            logs=await self._may(request, "get", namespace, "pods/log", group=""),
            group=group,
        )

    async def _readable(self, request: Request, namespace: str) -> list[str]:
        """The kinds (plurals) whose jobs the caller may read in ``namespace``."""
        return [p for p in self.clients if await self._may(request, "get", namespace, p)]

    def _missing(self, ns: str, name: str, client: JobClient | None, plural: str) -> Response:
        if client is None:
            message = f"This dashboard serves no {plural} (is their CRD installed?)."
        else:
            message = f"{client.kind.kind} {ns}/{name} does not exist (or was deleted)."
        html = self.render("missing.html", namespace=ns, name=name, message=message)
        return HTMLResponse(html, status_code=404)

    def render(self, template: str, **context: Any) -> str:
        return self.templates.get_template(template).render(**context)

    # ---- pages ------------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        return RedirectResponse(
            f"{self.prefix}/namespaces/{self.default_namespace}", status_code=307
        )

    async def jobs_page(self, request: Request) -> Response:
        ns = request.path_params["namespace"]
        namespaces = await run_in_threadpool(self._namespaces, ns)
        plurals = await self._readable(request, ns)
        rows = [views.job_row(j) for j in self.cache.jobs(ns, plurals)]
        html = self.render("jobs.html", namespace=ns, namespaces=namespaces, rows=rows)
        return HTMLResponse(html)

    async def job_page(self, request: Request) -> Response:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        client, plural = self._client(request), request.path_params["plural"]
        if client is None:
            return self._missing(ns, name, None, plural)
        job = self.cache.job(plural, ns, name) or await run_in_threadpool(
            self._get_live, client, ns, name
        )
        if job is None:
            return self._missing(ns, name, client, plural)
        panes = await self._panes(request, ns)
        detail = await self._detail(client, job, panes)
        html = self.render(
            "job.html", namespace=ns, name=name, kind=client.kind, detail=detail, panes=panes
        )
        return HTMLResponse(html)

    @staticmethod
    def _get_live(client: JobClient, ns: str, name: str) -> dict[str, Any] | None:
        """A job the watch has not delivered yet (a link followed right after creating it)."""
        try:
            return client.get(name, ns)
        except NotFound:
            return None

    def _namespaces(self, current: str) -> list[str]:
        try:
            kube = next(iter(self.clients.values())).kube
            listed = kube.resource(NAMESPACES).list()
            names = [n["metadata"]["name"] for n in listed.get("items") or []]
        except ApiError:  # no right to list namespaces: offer the current one only
            names = []
        return sorted(set(names) | {current})

    async def _detail(
        self, client: JobClient, job: dict[str, Any], panes: views.Panes
    ) -> dict[str, Any]:
        meta = job["metadata"]
        pods = self.cache.pods(client.kind.plural, meta["namespace"], meta["name"])
        events: list[dict[str, Any]] | None = None  # not the caller's to read
        if panes.events:
            try:
                events = await run_in_threadpool(client.get_events, meta["name"], meta["namespace"])
            except ApiError as err:
                log.info("events of %s/%s: %s", meta["namespace"], meta["name"], err)
                events = []
        group = None  # not the caller's to read, or no group
        if panes.group:
            try:
                group = await run_in_threadpool(
                    client.get_pod_group, meta["name"], meta["namespace"]
                )
            except ApiError as err:
                log.info("PodGroup of %s/%s: %s", meta["namespace"], meta["name"], err)
        return views.job_detail(job, pods, events, group=group)

    # ---- event streams ----------------------------------------------------------------------
    def _stream(
        self, body: Callable[[_Feed], AsyncIterator[str]], wants: Callable[[Change], bool]
    ) -> Response:
        async def events() -> AsyncIterator[str]:
            feed = _Feed()
            token = self.cache.subscribe(wants, feed.push)
            try:
                async for chunk in body(feed):
                    yield chunk
            finally:
                self.cache.unsubscribe(token)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    async def _changes(self, feed: _Feed) -> AsyncIterator[list[Any]]:
        """Batches of queued items until the server stops; keep-alives while idle."""
        while not self.stopping.is_set():
            batch = await feed.next_batch(KEEPALIVE_SECONDS)
            yield batch

    async def jobs_stream(self, request: Request) -> Response:
        ns = request.path_params["namespace"]
        plurals = await self._readable(request, ns)

        async def body(feed: _Feed) -> AsyncIterator[str]:
            rows = [views.job_row(j) for j in self.cache.jobs(ns, plurals)]
            yield _sse("reset", {"html": self.render("_rows.html", rows=rows)})
            async for batch in self._changes(feed):
                if not batch:
                    yield ": keep-alive\n\n"
                for plural, name in dict.fromkeys((c.plural, c.job) for c in batch):
                    job = self.cache.job(plural, ns, name)
                    key = f"{plural}/{name}"
                    if job is None:
                        yield _sse("delete", {"key": key, "name": name})
                    else:
                        html = self.render("_rows.html", rows=[views.job_row(job)])
                        yield _sse("upsert", {"key": key, "name": name, "html": html})

        return self._stream(
            body, lambda c: c.source == "job" and c.namespace == ns and c.plural in plurals
        )

    async def job_stream(self, request: Request) -> Response:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        client, plural = self._client(request), request.path_params["plural"]
        if client is None:
            return self._missing(ns, name, None, plural)

        panes = await self._panes(request, ns)

        async def body(feed: _Feed) -> AsyncIterator[str]:
            followers: dict[tuple[str, str, int], _LogFollower] = {}
            try:
                async for chunk in self._job_updates(client, ns, name, feed, followers, panes):
                    yield chunk
            finally:
                for follower in followers.values():
                    follower.stop()

        return self._stream(
            body, lambda c: c.plural == plural and c.namespace == ns and c.job == name
        )

    async def _job_updates(
        self,
        client: JobClient,
        ns: str,
        name: str,
        feed: _Feed,
        followers: dict[tuple[str, str, int], _LogFollower],
        panes: views.Panes,
    ) -> AsyncIterator[str]:
        plural = client.kind.plural
        batch: list[Any] = [Change("job", plural, ns, name)]  # render once on connect
        while True:
            if any(isinstance(item, Change) for item in batch):
                job = self.cache.job(plural, ns, name)
                if job is None:
                    yield _sse("deleted", {"name": name})
                    return
                detail = await self._detail(client, job, panes)
                yield _sse("detail", {"html": self.render("_detail.html", detail=detail)})
                if panes.logs:  # else no follower: the caller may not read its pods' logs
                    for pod, marker in await self._follow_logs(client, ns, name, feed, followers):
                        yield _sse("log", {"pod": pod, "lines": [marker]})
            lines: dict[str, list[str]] = {}
            for item in batch:
                if isinstance(item, tuple):
                    lines.setdefault(item[1], []).append(item[2])
            for pod, text in lines.items():
                yield _sse("log", {"pod": pod, "lines": text})
            if self.stopping.is_set():
                return
            batch = await feed.next_batch(KEEPALIVE_SECONDS)
            if not batch:
                yield ": keep-alive\n\n"

    async def _follow_logs(
        self,
        client: JobClient,
        ns: str,
        name: str,
        feed: _Feed,
        followers: dict[tuple[str, str, int], _LogFollower],
    ) -> list[tuple[str, str]]:
        """Start followers for container runs not followed yet; markers for restarted ones."""
        markers = []
        for pod in self.cache.pods(client.kind.plural, ns, name)[:MAX_FOLLOWED_PODS]:
            key = views.log_key(pod)
            if key is None or key in followers:
                continue
            if any(k[0] == key[0] for k in followers):
                markers.append((key[0], f"--- {key[0]}: container restarted (run {key[2]}) ---"))
            try:
                stream = await run_in_threadpool(
                    client.stream_pod_log, key[0], ns, follow=True, tail_lines=LOG_TAIL_LINES
                )
            except ApiError as err:
                log.info("cannot follow the log of %s/%s: %s", ns, key[0], err)
                continue
            followers[key] = _LogFollower(stream, feed)
        return markers

    # ---- writes -----------------------------------------------------------------------------
    def _refuse_write(self, request: Request) -> Response | None:
        if not self.allow_write:
            return JSONResponse(
                {"error": "the dashboard is read-only (start it with --allow-write)"}, 403
            )
        why = cross_site_write(request.headers)
        if why is not None:
            return JSONResponse({"error": why}, 403)
        return None

    async def create_job(self, request: Request) -> Response:
        refused = self._refuse_write(request)
        if refused:
            return refused
        ns, plural = request.path_params["namespace"], request.path_params["plural"]
        if plural != ANY_KIND and plural not in self.clients:
            return JSONResponse({"error": f"this dashboard serves no {plural}"}, 404)
        body = await request.body()
        if len(body) > MAX_YAML_BYTES:
            return JSONResponse({"error": "the YAML is larger than 1 MiB"}, 413)
        try:
            doc = safeyaml.load(body.decode("utf-8", "replace")) or {}
            client = self._creating(plural, doc)
            job = load_job(doc, client.kind)
        except yaml.YAMLError as err:
            return JSONResponse({"error": f"the YAML does not parse: {err}"}, 400)
        except (TypeError, ValueError) as err:
            return JSONResponse({"error": str(err)}, 400)
        meta = job.setdefault("metadata", {})
        if meta.get("namespace", ns) != ns:
            message = f"metadata.namespace is {meta['namespace']!r}, but this page shows {ns!r}"
            return JSONResponse({"error": message}, 400)
        if not await self._may(request, "create", ns, client.kind.plural):
            return JSONResponse({"error": f"you may not create {client.kind.kind}s in {ns}"}, 403)
        try:
            created = await run_in_threadpool(client.create, job, ns)
        except ApiError as err:
            return _api_error(err)
        name = created["metadata"]["name"]
        url = f"{self.prefix}/namespaces/{ns}/{client.kind.plural}/{name}"
        return JSONResponse({"name": name, "kind": client.kind.kind, "url": url}, 201)

    def _creating(self, plural: str, doc: Any) -> JobClient:
        """The client of the kind a create makes: the address's, or the one the YAML names
        (a TFJob when it names none); ValueError for a kind not served here."""
        if plural != ANY_KIND:
            return self.clients[plural]
        if not isinstance(doc, dict):
            raise ValueError("a job must be a mapping")
        named = doc.get("kind") or "TFJob"
        kind: JobKindInfo | None = KINDS.get(named) if isinstance(named, str) else None
        if kind is None:
            known = " or ".join(KINDS)
            raise ValueError(f"expected kind {known}, got {named!r}")
        if kind.plural not in self.clients:
            raise ValueError(f"this cluster serves no {kind.kind}s (its CRD is not installed)")
        return self.clients[kind.plural]

    async def suspend_job(self, request: Request) -> Response:
        return await self._set_suspend(request, True)

    async def resume_job(self, request: Request) -> Response:
        return await self._set_suspend(request, False)

    def _job_write(self, request: Request) -> tuple[JobClient, str, str] | Response:
        """The client, namespace and name a write on one job goes to, or why it may not."""
        refused = self._refuse_write(request)
        if refused:
            return refused
        client = self._client(request)
        if client is None:
            return _not_served(request)
        return client, request.path_params["namespace"], request.path_params["name"]

    async def _set_suspend(self, request: Request, suspend: bool) -> Response:
        target = self._job_write(request)
        if isinstance(target, Response):
            return target
        client, ns, name = target
        change = client.suspend if suspend else client.resume
        try:
            await run_in_threadpool(change, name, ns)
        except ApiError as err:
            return _api_error(err)
        return JSONResponse({"name": name, "suspend": suspend})

    async def delete_job(self, request: Request) -> Response:
        target = self._job_write(request)
        if isinstance(target, Response):
            return target
        client, ns, name = target
        try:
            await run_in_threadpool(client.delete, name, ns)
        except ApiError as err:
            return _api_error(err)
        return JSONResponse({"deleted": name, "url": f"{self.prefix}/namespaces/{ns}"})

    async def healthz(self, request: Request) -> Response:
        return Response("ok", media_type="text/plain")


def _api_error(err: ApiError) -> Response:
    causes = [str(c) for c in err.causes] if isinstance(err, Invalid) else []
    status = err.status if err.status else 502
    if isinstance(err, NotFound | AlreadyExists):
        status = err.status
    return JSONResponse(
        {"error": err.message or str(err), "reason": err.reason, "causes": causes}, status
    )


def _not_served(request: Request) -> Response:
    return JSONResponse({"error": f"this dashboard serves no {request.path_params['plural']}"}, 404)


def _redirect_to(url: str) -> Callable[[Request], Any]:
    async def redirect(request: Request) -> Response:
        return RedirectResponse(url, status_code=307)

    return redirect


def create_app(
    client: JobClient,
    cache: ClusterCache,
    *,
    allow_write: bool = False,
    default_namespace: str | None = None,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
    url_prefix: str = "",
    authenticator: Authenticator | None = None,
) -> Starlette:
    """The ASGI app over ``client``'s connection, serving the kinds of ``cache`` (a
    :class:`JobClient` of each); its lifespan starts the cache's informers and stops them. With
    ``url_prefix`` (e.g. ``/tfjobs/ui``, where v0.5.3's dashboard lived behind Kubeflow's
    gateway) every page, stream and asset is served, and linked, below that path."""
    prefix = "/" + url_prefix.strip("/") if url_prefix.strip("/") else ""
    clients = {
        plural: client
        if client.kind == kind
        else JobClient(kube=client.kube, namespace=client.namespace, kind=kind)
        for plural, kind in cache.kinds.items()
    }
    dash = Dashboard(
        clients,
        cache,
        allow_write,
        default_namespace or client.namespace,
        prefix,
        authenticator,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not await run_in_threadpool(cache.start):
            log.warning("informer caches did not sync; pages may be incomplete")
        try:
            yield
        finally:
            dash.stopping.set()
            await run_in_threadpool(cache.stop)

    static = StaticFiles(directory=str(resources.files("tf_operator.dashboard") / "static"))
    ns = "/namespaces/{namespace}"
    job = ns + "/{plural}/{name}"  # plural: the job's kind (tfjobs, pytorchjobs)
    routes = [
        Route("/", dash.index),
        Route("/healthz", dash.healthz),
        Route(ns, dash.jobs_page),
        Route(f"{ns}/stream", dash.jobs_stream),
        Route(ns + "/{plural}", dash.create_job, methods=["POST"]),  # or "jobs": any kind
        Route(job, dash.job_page),
        Route(job, dash.delete_job, methods=["DELETE"]),
        Route(f"{job}/suspend", dash.suspend_job, methods=["POST"]),
        Route(f"{job}/resume", dash.resume_job, methods=["POST"]),
        Route(f"{job}/stream", dash.job_stream),
        Mount("/static", static, name="static"),
    ]
    if prefix:
        routes = [Mount(prefix, routes=routes), Route("/", _redirect_to(prefix + "/"))]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    if authenticator is not None:  # inside the Host check: no sign-in for a rebound name
        middleware.append(
            Middleware(
                AuthMiddleware, authenticator=authenticator, prefix=prefix, resources=list(clients)
            )
        )
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.dashboard = dash
    return app
