"""``tf-operator-dashboard``: serve the job dashboard (console script): TFJobs, and PyTorchJobs
where the cluster has their CRD (the kinds it serves are read once at start).

Binds 127.0.0.1:8080 unless told otherwise (``--port 0`` picks a free port) and prints
``tf-operator-dashboard serving on http://HOST:PORT/ (read-only|read-write)`` once the socket
listens. Read-only unless ``--allow-write``. On every bind it answers only requests whose Host
it knows (loopback names, the bound address, ``--allowed-host``; ``*`` only by name), so a page
on another site cannot reach it through DNS rebinding (:mod:`.security`).

Bound to anything but loopback it warns, and asks callers to sign in: ``--auth=token`` (the
default there) with the token of ``--token-file`` or one it generates and prints;
``--auth=kubernetes`` with the caller's own Kubernetes token, reviewed and authorised by the API
server (TokenReview, SubjectAccessReview), as kube-rbac-proxy does. ``--auth=none`` there only
when asked for by name. A kubeconfig that cannot be read is one line on stderr and exit 1.
"""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

import click

from tf_operator.dashboard.security import allowed_hosts, is_loopback, new_token
from tf_operator.version import __version__

DEFAULT_PORT = 8080
GRACEFUL_SHUTDOWN_SECONDS = 2
AUTH_MODES = ("none", "token", "kubernetes")

__all__ = ["allowed_hosts", "main"]


def listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", help="Path to the kubeconfig file (default: as kubectl finds it).")
@click.option("--context", help="The kubeconfig context to use.")
@click.option("-n", "--namespace", help="Namespace shown first (default: the context's).")
@click.option(
    "--watch-namespace",
    help="Watch only this namespace (for RBAC limited to one namespace); default: all.",
)
@click.option("--address", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int, help="0: any free port.")
@click.option("--allow-write", is_flag=True, help="Enable creating, suspending and deleting jobs.")
@click.option(
    "--allowed-host",
    multiple=True,
    help="Extra Host header value to accept (e.g. the name of its Service or Ingress); "
    "'*' accepts any.",
)
@click.option(
    "--auth",
    type=click.Choice(AUTH_MODES),
    help="How callers sign in: token, kubernetes (TokenReview and SubjectAccessReview) or "
    "none. Default: none on a loopback address, token elsewhere.",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --auth=token, the file holding the token (default: a random one, printed).",
)
@click.option(
    "--url-prefix",
    default="",
    help="Serve below this path, e.g. /tfjobs/ui behind a gateway (v0.5.3's path).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log requests and informer activity.")
@click.version_option(__version__, prog_name="tf-operator-dashboard")
def main(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    watch_namespace: str | None,
    address: str,
    port: int,
    allow_write: bool,
    allowed_host: tuple[str, ...],
    auth: str | None,
    token_file: Path | None,
    url_prefix: str,
    verbose: bool,
) -> None:
    """Serve the job dashboard (TFJobs, PyTorchJobs, XGBoostJobs, JAXJobs, PaddleJobs): live job lists, job pages with replicas,
    logs and events."""
    try:
        import uvicorn

        from tf_operator.dashboard.app import create_app
    except ImportError as err:  # the web stack is an optional extra
        raise click.ClickException(
            f"{err.name} is not installed: pip install 'tf-operator[dashboard]'"
        ) from err
    from tf_operator.dashboard.cache import ClusterCache, served_kinds
    from tf_operator.dashboard.security import (
        Authenticator,
        KubernetesAuthenticator,
        TokenAuthenticator,
    )
    from tf_operator.sdk import TFJobClient

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from tf_operator.k8s.client import ApiError, ConfigError

    loopback = is_loopback(address)
    auth = auth or ("none" if loopback else "token")
    try:
        client = TFJobClient(kubeconfig, namespace=namespace, context=context)
    except (ConfigError, OSError) as err:
        raise click.ClickException(f"cannot load the cluster configuration: {err}") from None
    try:
        kinds = served_kinds(client.kube, watch_namespace)
    except ApiError as err:  # unreachable, or refused for another reason than the kind's
        raise click.ClickException(f"cannot list jobs: {err}") from None
    if not kinds:
        raise click.ClickException(
            "the cluster serves no training jobs (TFJobs, PyTorchJobs, XGBoostJobs, JAXJobs, "
            "PaddleJobs) we may list: install their CRD (manifests/) or grant this account list "
            "on them"
        )
    token = _token(auth, token_file)
    authenticator: Authenticator | None = None
    if auth == "token":
        authenticator = TokenAuthenticator(token)
    elif auth == "kubernetes":
        authenticator = KubernetesAuthenticator(client.kube)
    cache = ClusterCache(client.kube, namespace=watch_namespace, kinds=kinds)
    hosts = allowed_hosts(address, allowed_host)
    app = create_app(
        client,
        cache,
        allow_write=allow_write,
        default_namespace=watch_namespace or client.namespace,
        allowed_hosts=hosts,
        url_prefix=url_prefix,
        authenticator=authenticator,
    )
    sock = listen(address, port)
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    mode = "read-write" if allow_write else "read-only"
    path = "/" + url_prefix.strip("/") + "/" if url_prefix.strip("/") else "/"
    print(f"tf-operator-dashboard serving on http://{shown}:{bound}{path} ({mode})", flush=True)
    if not loopback:
        _warn_exposed(address, hosts, auth)
    if auth == "token" and token_file is None:
        print(f"sign in at http://{shown}:{bound}{path}?token={token}", flush=True)
    config = uvicorn.Config(
        app,
        log_level="info" if verbose else "warning",
        access_log=verbose,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        lifespan="on",
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        client.close()
    sys.exit(0)


def _token(auth: str, token_file: Path | None) -> str:
    if auth != "token":
        if token_file is not None:
            raise click.UsageError("--token-file goes with --auth=token")
        return ""
    if token_file is None:
        return new_token()
    try:
        token = token_file.read_text().strip()
    except OSError as err:
        raise click.ClickException(f"cannot read --token-file: {err}") from None
    if len(token) < 16:
        raise click.ClickException(f"the token in {token_file} is shorter than 16 characters")
    return token


def _warn_exposed(address: str, hosts: list[str], auth: str) -> None:
    """Say what a bind beyond loopback exposes (on stderr, before serving)."""
    reach = "any Host" if hosts == ["*"] else "Host " + ", ".join(hosts)
    who = {
        "none": "NO sign-in: anyone who reaches it acts with the dashboard's own rights",
        "token": "callers sign in with the dashboard's token",
        "kubernetes": "callers sign in with their Kubernetes token, authorised per request",
    }[auth]
    click.echo(
        f"warning: serving on {address}, reachable from other machines ({reach}); {who}",
        err=True,
    )


if __name__ == "__main__":
    main()
