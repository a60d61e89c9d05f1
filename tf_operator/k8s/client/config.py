"""Where the API server is and how to authenticate: kubeconfig and in-cluster loading.

A :class:`ClientConfig` is client-go's ``rest.Config`` in small: the server URL, TLS material
(CA, client certificate and key, as files or inline data; ``insecure-skip-tls-verify``;
``tls-server-name``), an optional ``proxy-url``, and a :class:`TokenSource` that yields the
``Authorization`` header value. Loading it needs only YAML and the standard library, so the
operator never imports the official client's ~34 MiB of generated models just to start.

* :func:`load_kubeconfig` follows kubectl: ``KUBECONFIG``-style ``:``-separated lists merge
  (the first file naming a cluster, user or context wins; the first ``current-context``
  wins), relative file paths resolve against the file that names them, a context may be
  chosen by name, and its namespace is kept. A user's ``token`` wins over ``tokenFile``
  (re-read every minute, like client-go's cached token file); ``username``/``password`` give
  basic auth. Users with an ``exec`` or ``auth-provider`` plugin are handed to the official
  ``kubernetes`` package (imported only then), whose refresh hook keeps their credentials
  current (:func:`from_official_configuration`).
* :func:`load_incluster` reads the service account: ``KUBERNETES_SERVICE_HOST``/``_PORT``,
  its CA file and its token file, re-read every minute (bound tokens rotate).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV = "KUBERNETES_SERVICE_PORT"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_TOKEN_FILENAME = f"{SERVICE_ACCOUNT_DIR}/token"
SERVICE_CERT_FILENAME = f"{SERVICE_ACCOUNT_DIR}/ca.crt"
# How long a token read from a file is trusted before it is read again (client-go: 1 min).
TOKEN_FILE_REFRESH_SECONDS = 60.0


class ConfigError(Exception):
    """The client configuration could not be loaded; the text says why."""


# ---- credentials ----------------------------------------------------------------------------


class TokenSource:
    """Gives the ``Authorization`` header value (None: send none). Thread-safe."""

    def authorization(self) -> str | None:
        return None


class StaticToken(TokenSource):
    def __init__(self, header: str) -> None:
        self._header = header

    def authorization(self) -> str | None:
        return self._header


def bearer(token: str) -> StaticToken:
    return StaticToken(f"Bearer {token}")


def basic(username: str, password: str) -> StaticToken:
    raw = f"{username}:{password}".encode()
    return StaticToken(f"Basic {base64.b64encode(raw).decode('ascii')}")


class FileToken(TokenSource):
    """A bearer token read from a file, re-read once ``refresh`` seconds have passed.

    A failed re-read keeps the last token (the file may be in the middle of a rotation)."""

    def __init__(
        self,
        path: str,
        refresh: float = TOKEN_FILE_REFRESH_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self._refresh = refresh
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._header: str | None = None
        self._expires = float("-inf")
        self._read()

    def _read(self) -> None:
        token = Path(self.path).read_text().strip()
        if not token:
            raise ConfigError(f"token file {self.path} is empty")
        self._header = f"Bearer {token}"
        self._expires = self._monotonic() + self._refresh

    def authorization(self) -> str | None:
        if self._monotonic() < self._expires:
            return self._header
        with self._lock:
            if self._monotonic() >= self._expires:
                try:
                    self._read()
                except (OSError, ConfigError):
                    self._expires = self._monotonic() + self._refresh
        return self._header


class RefreshedByHook(TokenSource):
    """Credentials kept by an official ``kubernetes.client.Configuration`` (exec and
    auth-provider plugins), read the way its own client reads them before each request
    (running its ``refresh_api_key_hook``)."""

    def __init__(self, configuration: Any) -> None:
        self._cfg = configuration
        self._lock = threading.Lock()

    def authorization(self) -> str | None:
        with self._lock:  # the hook re-runs an expired plugin
            value = self._cfg.get_api_key_with_prefix("BearerToken", alias="authorization")
        return str(value) if value else None


# ---- the configuration ----------------------------------------------------------------------


@dataclass
class ClientConfig:
    """How to reach and authenticate to one API server (see the module docstring)."""

    host: str
    auth: TokenSource = field(default_factory=TokenSource)
    ca_file: str | None = None
    ca_data: bytes | None = None
    cert_file: str | None = None
    key_file: str | None = None
    cert_data: bytes | None = None
    key_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    namespace: str | None = None  # the kubeconfig context's namespace, if it names one

    def with_host(self, host: str) -> ClientConfig:
        """The same credentials for another server URL (``--master``)."""
        return replace(self, host=host.rstrip("/"))

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS context for this server: its CA (else the system's), the client
        certificate, or no verification with ``insecure``."""
        if self.insecure:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            cadata = self.ca_data.decode() if self.ca_data else None
            try:
                context = ssl.create_default_context(cafile=self.ca_file, cadata=cadata)
            except (OSError, ssl.SSLError) as err:
                raise ConfigError(f"cannot load the certificate authority: {err}") from err
        if self.cert_file or self.cert_data:
            _load_client_certificate(context, self)
        return context


def _load_client_certificate(context: ssl.SSLContext, cfg: ClientConfig) -> None:
    """``load_cert_chain`` reads files only: inline data goes through private temporary
    files, removed as soon as the context holds them."""
    made: list[str] = []

    def as_file(path: str | None, data: bytes | None) -> str | None:
        if path or not data:
            return path
        fd, name = tempfile.mkstemp(prefix="tfop-tls-")  # mode 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        made.append(name)
        return name

    try:
        certfile = as_file(cfg.cert_file, cfg.cert_data)
        keyfile = as_file(cfg.key_file, cfg.key_data)
        if certfile is None:
            raise ConfigError("a client key was given without a client certificate")
        context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as err:
        raise ConfigError(f"cannot load the client certificate: {err}") from err
    finally:
        for name in made:
            os.unlink(name)


# ---- in-cluster -----------------------------------------------------------------------------


def _join_host_port(host: str, port: str) -> str:
    return f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"


def load_incluster(
    environ: Mapping[str, str] | None = None,
    token_file: str | None = None,
    ca_file: str | None = None,
) -> ClientConfig:
    """The service account's configuration (client-go's ``InClusterConfig``)."""
    env = os.environ if environ is None else environ
    host, port = env.get(SERVICE_HOST_ENV), env.get(SERVICE_PORT_ENV)
    if not host or not port:
        raise ConfigError(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
            "KUBERNETES_SERVICE_PORT must be defined"
        )
    token_path = token_file or SERVICE_TOKEN_FILENAME
    ca_path = ca_file or SERVICE_CERT_FILENAME
    if not os.path.isfile(ca_path):
        raise ConfigError(f"in-cluster CA file {ca_path} does not exist")
    try:
        auth = FileToken(token_path)
    except OSError as err:
        raise ConfigError(f"cannot read the service account token: {err}") from err
    return ClientConfig(host=f"https://{_join_host_port(host, port)}", auth=auth, ca_file=ca_path)


# ---- kubeconfig -----------------------------------------------------------------------------


def _read_yaml(path: str) -> dict[str, Any]:
    import yaml

    from tf_operator.k8s.safeyaml import load

    try:
        with open(path) as handle:
            doc = load(handle.read())  # a safe loader, aliases bounded
    except OSError as err:
        raise ConfigError(f"cannot read kubeconfig {path}: {err}") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"kubeconfig {path} is not valid YAML: {_one_line(err)}") from err
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {path} is not a mapping")
    return doc


@dataclass
class _Merged:
    """Named entries of the merged files, each with the directory of the file naming it."""

    clusters: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    users: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_context: str = ""


def _one_line(err: Exception) -> str:
    """A YAML error as kubectl prints one: the problem and where, on one line."""
    problem = getattr(err, "problem", None)
    mark = getattr(err, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(err).split())


def _entries(doc: dict[str, Any], section: str, entry_key: str, path: str) -> list[dict[str, Any]]:
    """The named entries of a kubeconfig section (a list of mappings, each entry a mapping)."""
    items = doc.get(section) or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ConfigError(f"kubeconfig {path}: {section} must be a list of mappings")
    for item in items:
        if not isinstance(item.get(entry_key) or {}, dict):
            raise ConfigError(
                f"kubeconfig {path}: {section} entry {item.get('name')!r} is malformed"
            )
    return items


def _merge(paths: list[str]) -> _Merged:
    merged = _Merged()
    for path in paths:
        doc = _read_yaml(path)
        base = os.path.dirname(os.path.abspath(path))
        for section, entry_key, target in (
            ("clusters", "cluster", merged.clusters),
            ("users", "user", merged.users),
        ):
            for item in _entries(doc, section, entry_key, path):
                name = item.get("name")
                if name and name not in target:
                    target[name] = (item.get(entry_key) or {}, base)
        for item in _entries(doc, "contexts", "context", path):
            name = item.get("name")
            if name and name not in merged.contexts:
                merged.contexts[name] = item.get("context") or {}
        if not merged.current_context:
            current = doc.get("current-context") or ""
            if not isinstance(current, str):
                raise ConfigError(f"kubeconfig {path}: current-context must be a string")
            merged.current_context = current
    return merged


def kubeconfig_paths(spec: str) -> list[str]:
    """The files of a ``KUBECONFIG``-style list (``:``-separated, empty parts skipped)."""
    paths = [p for p in spec.split(os.pathsep) if p]
    if not paths:
        raise ConfigError("no kubeconfig file given")
    return paths


def _resolve(base: str, path: str | None) -> str | None:
    if not path:
        return None
    return path if os.path.isabs(path) else os.path.join(base, path)


def _decode(data: str | None, what: str) -> bytes | None:
    if not data:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except ValueError as err:
        raise ConfigError(f"{what} is not valid base64: {err}") from err


def load_kubeconfig(spec: str, context: str | None = None) -> ClientConfig:
    """The configuration of ``context`` (default: the current one) of the kubeconfig(s)."""
    existing = [p for p in kubeconfig_paths(spec) if os.path.exists(p)]
    if not existing:
        raise ConfigError(f"kubeconfig {spec} does not exist")
    merged = _merge(existing)
    name = context or merged.current_context
    if not name:
        raise ConfigError(f"kubeconfig {spec} has no current-context and none was chosen")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise ConfigError(f"context {name!r} not found in kubeconfig {spec}")
    cluster_name, user_name = ctx.get("cluster") or "", ctx.get("user") or ""
    if cluster_name not in merged.clusters:
        raise ConfigError(f"cluster {cluster_name!r} of context {name!r} not found")
    cluster, cluster_dir = merged.clusters[cluster_name]
    user, user_dir = merged.users.get(user_name, ({}, ""))
    server = str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} has no server")
    if user.get("exec") or user.get("auth-provider"):
        return _load_with_plugin(existing, name, ctx.get("namespace"))
    cfg = ClientConfig(
        host=server.rstrip("/"),
        ca_file=_resolve(cluster_dir, cluster.get("certificate-authority")),
        ca_data=_decode(cluster.get("certificate-authority-data"), "certificate-authority-data"),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        cert_file=_resolve(user_dir, user.get("client-certificate")),
        key_file=_resolve(user_dir, user.get("client-key")),
        cert_data=_decode(user.get("client-certificate-data"), "client-certificate-data"),
        key_data=_decode(user.get("client-key-data"), "client-key-data"),
        namespace=ctx.get("namespace") or None,
    )
    token_file = _resolve(user_dir, user.get("tokenFile"))
    if user.get("token"):
        cfg.auth = bearer(str(user["token"]))
    elif token_file:
        try:
            cfg.auth = FileToken(token_file)
        except OSError as err:
            raise ConfigError(f"cannot read tokenFile {token_file}: {err}") from err
    elif user.get("username") or user.get("password"):
        cfg.auth = basic(str(user.get("username") or ""), str(user.get("password") or ""))
    return cfg


def _load_with_plugin(files: list[str], context: str, namespace: str | None) -> ClientConfig:
    """A user with an exec or auth-provider plugin: the official loader runs the plugin."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    official = k8s_client.Configuration()
    try:
        k8s_config.load_kube_config(
            config_file=os.pathsep.join(files),
            context=context,
            client_configuration=official,
            persist_config=False,
        )  # type: ignore[no-untyped-call]  # the kubernetes client leaves it unannotated
    except k8s_config.ConfigException as err:
        raise ConfigError(str(err)) from err
    cfg = from_official_configuration(official)
    cfg.namespace = namespace or None
    return cfg


def from_official_configuration(official: Any) -> ClientConfig:
    """A :class:`ClientConfig` reading an official ``kubernetes.client.Configuration``."""
    return ClientConfig(
        host=str(official.host).rstrip("/"),
        auth=RefreshedByHook(official),
        ca_file=official.ssl_ca_cert or None,
        cert_file=official.cert_file or None,
        key_file=official.key_file or None,
        insecure=not official.verify_ssl,
        tls_server_name=getattr(official, "tls_server_name", None) or None,
        proxy_url=official.proxy or None,
    )
