"""Who may reach the dashboard and act through it: Host allow-list, same-origin writes, sign-in.

The dashboard acts on the cluster with its own identity, so three guards stand in front of it:

* **Host allow-list, on every bind** (:func:`allowed_hosts`): a page on another site cannot
  reach it through DNS rebinding, since the browser then sends that site's name as ``Host``.
  The loopback names are always accepted (``kubectl port-forward`` keeps the browser's
  ``localhost``), plus the bound address when it is one, plus each ``--allowed-host``; ``*``
  (any Host) only when asked for by name.
* **Same-origin writes** (:func:`cross_site_write`): a write must carry the dashboard's own
  header (a cross-site form cannot), and when the browser says where it comes from
  (``Origin``, ``Sec-Fetch-Site``), from this very origin.
* **Sign-in** (:class:`AuthMiddleware`): a dashboard reachable from other machines asks who is
  calling. ``token`` mode compares a bearer token with the dashboard's own (a random one printed
  at start, or ``--token-file``); ``kubernetes`` mode is kube-rbac-proxy's: the caller's own
  Kubernetes bearer token, authenticated by the API server (TokenReview) and each request
  authorised for that user (SubjectAccessReview on the jobs of the namespace: ``get`` to read,
  ``create``, ``patch`` or ``delete`` to write), answers cached for a minute. A request about
  one kind's jobs (``/namespaces/ns/pytorchjobs/...``) is reviewed on that kind's resource
  (``pytorchjobs``); one about every kind (a namespace's list) needs the verb on one kind at
  least, and the dashboard then shows only the kinds the caller may read (``Dashboard``).
  What a job page shows beyond the job is reviewed too, on exactly the resource it comes from:
  its events (``list`` ``events``) and its replicas' logs (``get`` ``pods/log``); a pane the
  caller may not read is left out, with a line saying why. A browser
  signs in once with ``?token=...``: the token is exchanged for a session cookie (HttpOnly,
  SameSite=Strict) and the address reloaded without it; API clients send
  ``Authorization: Bearer``.
"""

from __future__ import annotations

import hashlib
import html
import ipaddress
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit

from cachetools import TTLCache

from tf_operator.k8s.client import KubeInterface, Resource
from tf_operator.sdk.kinds import KINDS

log = logging.getLogger(__name__)

JOBS_GROUP = "kubeflow.org"  # the API group of every job kind the dashboard serves

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
WRITE_HEADER = "X-TFJob-Dashboard"
SESSION_COOKIE = "tfjob-dashboard-session"
SESSION_SECONDS = 8 * 3600
REVIEW_CACHE_SECONDS = 60.0
TOKEN_REVIEWS = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False)
ACCESS_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False
)
# What a request does to jobs, by method (kube-rbac-proxy maps HTTP verbs the same way);
# a POST to a job's suspend or resume patches it.
_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "DELETE": "delete"}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return address == "localhost"


def allowed_hosts(address: str, extra: tuple[str, ...]) -> list[str]:
    """The Host values a dashboard bound to ``address`` answers (see the module docstring)."""
    if "*" in extra:
        return ["*"]
    hosts = list(LOOPBACK_HOSTS)
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        hosts.append(address)  # a name
    else:
        if not ip.is_unspecified and not ip.is_loopback:
            hosts.append(f"[{ip}]" if ip.version == 6 else str(ip))
    return [*hosts, *(h for h in extra if h not in hosts)]


def cross_site_write(headers: Any) -> str | None:
    """Why a write must be refused as not coming from the dashboard's own page (None: it
    may go on). ``headers`` maps lower-case names to values."""
    if headers.get(WRITE_HEADER.lower()) != "1":
        return f"missing {WRITE_HEADER} header"
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a {site} request may not write"
    origin = headers.get("origin")
    if origin is not None and origin != "null":
        if urlsplit(origin).netloc.lower() != (headers.get("host") or "").lower():
            return f"a request from {origin} may not write"
    elif origin == "null":
        return "a request from an opaque origin may not write"
    return None


@dataclass(frozen=True)
class Caller:
    """Who is calling, as the authenticator established it."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Authenticator(Protocol):
    """How the middleware signs a caller in and decides what they may do."""

    mode: str

    def authenticate(self, token: str) -> Caller | None: ...

    def authorize(
        self, caller: Caller, verb: str, namespace: str, resource: str, group: str = JOBS_GROUP
    ) -> bool:
        """May ``caller`` ``verb`` the ``resource`` of API ``group`` in ``namespace``? (a job
        kind's plural by default; ``pods/log``: a subresource)"""
        ...


class TokenAuthenticator:
    """One shared bearer token; whoever has it may do everything the dashboard allows."""

    mode = "token"

    def __init__(self, token: str) -> None:
        if len(token) < 16:
            raise ValueError("the dashboard's token must be at least 16 characters")
        self._token = token.encode()

    def authenticate(self, token: str) -> Caller | None:
        if secrets.compare_digest(token.encode(), self._token):
            return Caller("dashboard-token")
        return None

    def authorize(
        self, caller: Caller, verb: str, namespace: str, resource: str, group: str = JOBS_GROUP
    ) -> bool:
        return True


class KubernetesAuthenticator:
    """The caller's own Kubernetes token, reviewed by the API server (TokenReview), and each
    request authorised for that user there (SubjectAccessReview), as kube-rbac-proxy does."""

    mode = "kubernetes"

    def __init__(self, kube: KubeInterface, cache_seconds: float = REVIEW_CACHE_SECONDS) -> None:
        self._tokens = kube.resource(TOKEN_REVIEWS)
        self._access = kube.resource(ACCESS_REVIEWS)
        self._lock = threading.Lock()
        self._callers: TTLCache[str, Caller | None] = TTLCache(4096, cache_seconds)
        self._decisions: TTLCache[tuple[Caller, str, str, str], bool] = TTLCache(
            16384, cache_seconds
        )

    def authenticate(self, token: str) -> Caller | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        with self._lock:
            if key in self._callers:
                return self._callers[key]
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        status = self._tokens.create(review).get("status") or {}
        caller = None
        if status.get("authenticated"):
            user = status.get("user") or {}
            extra = tuple(sorted((k, tuple(v)) for k, v in (user.get("extra") or {}).items()))
            caller = Caller(
                str(user.get("username", "")),
                str(user.get("uid", "")),
                tuple(user.get("groups") or ()),
                extra,
            )
        with self._lock:
            self._callers[key] = caller
        return caller

    def authorize(
        self, caller: Caller, verb: str, namespace: str, resource: str, group: str = JOBS_GROUP
    ) -> bool:
        key = (caller, verb, namespace, f"{group}/{resource}")
        with self._lock:
            if key in self._decisions:
                return self._decisions[key]
        plural, _, subresource = resource.partition("/")
        attributes = {"group": group, "resource": plural, "verb": verb, "namespace": namespace}
        if subresource:
            attributes["subresource"] = subresource
        spec: dict[str, Any] = {
            "user": caller.name,
            "groups": list(caller.groups),
            "resourceAttributes": attributes,
        }
        if caller.uid:
            spec["uid"] = caller.uid
        if caller.extra:
            spec["extra"] = {k: list(v) for k, v in caller.extra}
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        allowed = bool((self._access.create(review).get("status") or {}).get("allowed"))
        with self._lock:
            self._decisions[key] = allowed
        return allowed


def request_verb(method: str, path: str) -> str:
    """The API verb a dashboard request amounts to on jobs."""
    if method == "POST" and path.rstrip("/").rsplit("/", 1)[-1] in ("suspend", "resume"):
        return "patch"
    return _VERBS.get(method, "get")


def request_namespace(path: str) -> str:
    """The namespace a request concerns ("" for the index and assets)."""
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts[:-1]):
        if part == "namespaces":
            return parts[i + 1]
    return ""


def request_resource(path: str, resources: Sequence[str]) -> str | None:
    """The one kind of job a request concerns, by its plural (``/namespaces/ns/pytorchjobs/a``:
    ``pytorchjobs``); None when it concerns every kind (a namespace's list, its stream, a
    create whose kind is in its body)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) > 2 and parts[0] == "namespaces" and parts[2] in resources:
        return parts[2]
    return None


def resource_noun(resource: str) -> str:
    """How people name a resource's jobs: ``tfjobs`` are TFJobs."""
    kind = next((k for k in KINDS.values() if k.plural == resource), None)
    return f"{kind.kind}s" if kind is not None else resource


class AuthMiddleware:
    """Signs callers in and authorises each request (see the module docstring); ASGI, so
    the event streams pass through untouched."""

    def __init__(
        self,
        app: ASGIApp,
        authenticator: Authenticator,
        prefix: str = "",
        resources: Sequence[str] = ("tfjobs",),
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.prefix = prefix
        self.resources = tuple(resources)  # the plurals of the kinds the dashboard serves
        self._sessions: TTLCache[str, str] = TTLCache(10_000, SESSION_SECONDS)
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        relative = path[len(self.prefix) :] if path.startswith(self.prefix) else path
        if relative in ("/healthz",) or relative.startswith("/static/"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if scope["method"] == "GET" and query.get("token"):
            await self._sign_in(scope, send, query)
            return
        token = self._token(headers)
        verb, namespace = request_verb(scope["method"], relative), request_namespace(relative)
        resource = request_resource(relative, self.resources)
        asked = (resource,) if resource is not None else self.resources
        try:
            caller = await _in_thread(self.authenticator.authenticate, token) if token else None
            allowed = caller is not None and (
                not namespace or await _in_thread(self._may_any, caller, verb, namespace, asked)
            )
        except Exception as err:  # the API server could not review it: no answer is a yes
            log.warning("cannot review a dashboard request: %s", err)
            await _page(send, 503, "Unavailable", "The API server could not review the request.")
            return
        if caller is None:
            await _page(send, 401, "Sign in", self._sign_in_help(token is not None))
            return
        if not allowed:
            nouns = " or ".join(resource_noun(r) for r in asked)
            message = f"{caller.name} may not {verb} {nouns} in namespace {namespace}"
            await _page(send, 403, "Forbidden", message)
            return
        scope.setdefault("state", {})["caller"] = caller
        await self.app(scope, receive, send)

    def _may_any(self, caller: Caller, verb: str, namespace: str, resources: Sequence[str]) -> bool:
        return any(self.authenticator.authorize(caller, verb, namespace, r) for r in resources)

    def _token(self, headers: dict[str, str]) -> str | None:
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            return authorization[7:].strip() or None
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no session
            return None
        morsel = cookie.get(SESSION_COOKIE)
        if morsel is None:
            return None
        with self._lock:
            return self._sessions.get(morsel.value)

    async def _sign_in(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        token = query.pop("token")
        try:
            caller = await _in_thread(self.authenticator.authenticate, token)
        except Exception as err:
            log.warning("cannot review a dashboard sign-in: %s", err)
            await _page(send, 503, "Unavailable", "The API server could not review the token.")
            return
        if caller is None:
            await _page(send, 401, "Sign in", self._sign_in_help(True))
            return
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[session] = token
        location = scope.get("path", "/") + (f"?{urlencode(query)}" if query else "")
        cookie = (
            f"{SESSION_COOKIE}={session}; Path={self.prefix or '/'}; HttpOnly; "
            f"SameSite=Strict; Max-Age={SESSION_SECONDS}"
        )
        log.info("%s signed in to the dashboard", caller.name)
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", cookie.encode("latin-1")),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _sign_in_help(self, refused: bool) -> str:
        what = (
            "the dashboard's token (printed when it started, or its --token-file)"
            if self.authenticator.mode == "token"
            else "a Kubernetes bearer token (e.g. kubectl create token <service account>)"
        )
        first = "That token was refused. " if refused else ""
        return f"{first}Open this address with ?token=<token>, where the token is {what}."


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


async def _page(send: Send, status: int, title: str, message: str) -> None:
    body = (
        f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(message)}</p>"
    ).encode()
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="tf-operator-dashboard"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def new_token() -> str:
    """A random token for ``token`` mode (printed with the dashboard's address)."""
    return secrets.token_urlsafe(24)
