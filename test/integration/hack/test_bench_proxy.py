"""hack/bench_operator.py's counting proxy relays plain and chunked (watch) replies and counts
requests by verb and resource."""

from __future__ import annotations

import http.server
import importlib.util
import sys
import threading
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.integration


def _load():
    spec = importlib.util.spec_from_file_location("bench_operator", ROOT / "hack/bench_operator.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_operator"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


class _Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if "watch=true" in self.path:
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for line in (b'{"type":"ADDED"}\n', b'{"type":"DELETED"}\n'):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.write(b"0\r\n\r\n")
            return
        body = b'{"kind":"PodList"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_counting_proxy_relays_and_counts():
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    proxy = bench.CountingProxy(f"http://127.0.0.1:{upstream.server_address[1]}").start()
    try:
        base = proxy.url + "/api/v1/namespaces/default/pods"
        with urllib.request.urlopen(base, timeout=10) as resp:
            assert resp.read() == b'{"kind":"PodList"}'
        with urllib.request.urlopen(base + "?watch=true", timeout=10) as resp:
            assert resp.read() == b'{"type":"ADDED"}\n{"type":"DELETED"}\n'
        request = urllib.request.Request(base, data=b'{"a":1}', method="POST")
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert resp.status == 201
            assert resp.read() == b'{"a":1}'
        assert proxy.snapshot() == Counter(
            {("list", "pods"): 1, ("watch", "pods"): 1, ("create", "pods"): 1}
        )
    finally:
        proxy.stop()
        upstream.shutdown()
        upstream.server_close()
