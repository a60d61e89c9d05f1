"""``tf-operator-dashboard``: serve the TFJob dashboard (console script).

Binds 127.0.0.1:8080 unless told otherwise (``--port 0`` picks a free port) and prints
``tf-operator-dashboard serving on http://HOST:PORT/ (read-only|read-write)`` once the socket
listens. Read-only unless ``--allow-write``. Bound to a loopback address it accepts only
requests whose Host names a loopback address (a page on another site cannot reach it through
DNS rebinding); ``--allowed-host`` adds names when it is published behind a proxy.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys

import click

from tf_operator.version import __version__

DEFAULT_PORT = 8080
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
GRACEFUL_SHUTDOWN_SECONDS = 2


def allowed_hosts(address: str, extra: tuple[str, ...]) -> list[str]:
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = address == "localhost"
    if not loopback:
        return ["*"]
    return [*LOOPBACK_HOSTS, *extra]


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
@click.option("--allow-write", is_flag=True, help="Enable creating and deleting TFJobs.")
@click.option("--allowed-host", multiple=True, help="Extra Host header value to accept.")
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
    url_prefix: str,
    verbose: bool,
) -> None:
    """Serve the TFJob dashboard: live job lists, job pages with replicas, logs and events."""
    try:
        import uvicorn

        from tf_operator.dashboard.app import create_app
    except ImportError as err:  # the web stack is an optional extra
        raise click.ClickException(
            f"{err.name} is not installed: pip install 'tf-operator[dashboard]'"
        ) from err
    from tf_operator.dashboard.cache import ClusterCache
    from tf_operator.sdk import TFJobClient

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    client = TFJobClient(kubeconfig, namespace=namespace, context=context)
    cache = ClusterCache(client.kube, namespace=watch_namespace)
    app = create_app(
        client,
        cache,
        allow_write=allow_write,
        default_namespace=watch_namespace or client.namespace,
        allowed_hosts=allowed_hosts(address, allowed_host),
        url_prefix=url_prefix,
    )
    sock = listen(address, port)
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    mode = "read-write" if allow_write else "read-only"
    path = "/" + url_prefix.strip("/") + "/" if url_prefix.strip("/") else "/"
    print(f"tf-operator-dashboard serving on http://{shown}:{bound}{path} ({mode})", flush=True)
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


if __name__ == "__main__":
    main()
