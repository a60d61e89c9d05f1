"""The operator's HTTP monitoring endpoint: ``/metrics``, ``/healthz`` and ``/readyz``.

v0.5.3 served only ``/metrics`` (Prometheus text, plain HTTP on ``--monitoring-port``). This port
serves the same registry through ``prometheus_client`` plus two probe paths for the Deployment:
``/healthz`` answers 200 while the process serves requests, ``/readyz`` answers 200 once the
server's readiness check passes (the startup sequence flips it after the informer caches
synced). Like Go's ``promhttp`` handler it counts its own scrapes in
``promhttp_metric_handler_requests_total`` and ``promhttp_metric_handler_requests_in_flight``.
The server runs in a daemon thread; `stop` closes the socket.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge
from prometheus_client.exposition import choose_encoder

log = logging.getLogger(__name__)

_SCRAPES = Counter(
    "promhttp_metric_handler_requests",
    "Total number of scrapes by HTTP status code.",
    ["code"],
)
_IN_FLIGHT = Gauge(
    "promhttp_metric_handler_requests_in_flight",
    "Current number of scrapes being served.",
)


class MonitoringServer:
    """Serves metrics and probes on ``address:port`` (port 0 picks a free port)."""

    def __init__(
        self,
        port: int,
        address: str = "0.0.0.0",
        registry: CollectorRegistry = REGISTRY,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        self._registry = registry
        self._ready = ready
        self._httpd = ThreadingHTTPServer((address, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self._httpd.server_address[1])

    def set_ready_check(self, ready: Callable[[], bool]) -> None:
        """Replace the function that decides what ``/readyz`` answers."""
        self._ready = ready

    def start(self) -> None:
        """Serve in a background daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="monitoring", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    server._serve_metrics(self)
                elif path == "/healthz":
                    _reply(self, 200, b"ok")
                elif path == "/readyz":
                    ok = server._is_ready()
                    _reply(self, 200 if ok else 503, b"ok" if ok else b"not ready")
                else:
                    _reply(self, 404, b"404 page not found")

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                log.debug("monitoring: " + format, *args)

        return Handler

    def _is_ready(self) -> bool:
        try:
            return bool(self._ready())
        except Exception:  # a broken check must not kill the probe server
            log.exception("readiness check failed")
            return False

    def _serve_metrics(self, handler: BaseHTTPRequestHandler) -> None:
        _IN_FLIGHT.inc()
        try:
            encoder, content_type = choose_encoder(handler.headers.get("Accept", ""))
            body = encoder(self._registry)
            _SCRAPES.labels(code="200").inc()
            _reply(handler, 200, body, content_type)
        except Exception:
            _SCRAPES.labels(code="500").inc()
            log.exception("metrics collection failed")
            _reply(handler, 500, b"metrics collection failed")
        finally:
            _IN_FLIGHT.dec()


def _reply(
    handler: BaseHTTPRequestHandler,
    code: int,
    body: bytes,
    content_type: str = "text/plain; charset=utf-8",
) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
