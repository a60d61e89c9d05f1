"""The REST client over TLS: a CA from the kubeconfig, client certificates the server checks,
``tls-server-name``, ``insecure-skip-tls-verify``, and credentials from an exec plugin.

A small HTTPS server (the standard library's, requiring a client certificate signed by the
test CA) answers every GET with the Authorization header it received."""

import http.server
import json
import shutil
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from tf_operator.k8s.client import (
    NAMESPACES,
    TransportError,
    load_kube_client,
)

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=test-ca", cwd=d)  # fmt: skip
    for name, subj, ext in (
        ("server", "/CN=api.test", "subjectAltName=DNS:api.test"),
        ("client", "/CN=alice", "extendedKeyUsage=clientAuth"),
    ):
        (d / f"{name}.ext").write_text(ext + "\n")
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subj, cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
                "-extfile", f"{name}.ext", cwd=d)  # fmt: skip
    return d


class _Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - the standard library's name
        cert = self.connection.getpeercert() or {}
        subject = dict(x[0] for x in cert.get("subject", ()))
        body = json.dumps(
            {
                "kind": "NamespaceList",
                "authorization": self.headers.get("Authorization"),
                "client": subject.get("commonName"),
                "items": [],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(pki):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    ctx.load_verify_locations(pki / "ca.crt")
    ctx.verify_mode = ssl.CERT_REQUIRED
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def kubeconfig(tmp_path, server, cluster, user):
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def data(path: Path) -> str:
    import base64

    return base64.b64encode(path.read_bytes()).decode()


def answer(path):
    return load_kube_client(path).resource(NAMESPACES).list()


def test_ca_and_client_certificate_from_inline_data(tmp_path, pki, server, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    cluster = {"certificate-authority-data": data(pki / "ca.crt"), "tls-server-name": "api.test"}
    user = {
        "client-certificate-data": data(pki / "client.crt"),
        "client-key-data": data(pki / "client.key"),
        "token": "t0k",
    }
    got = answer(kubeconfig(tmp_path, server, cluster, user))
    assert got["client"] == "alice" and got["authorization"] == "Bearer t0k"


def test_certificate_files_relative_to_the_kubeconfig(tmp_path, pki, server, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    for name in ("ca.crt", "client.crt", "client.key"):
        shutil.copy(pki / name, tmp_path / name)
    cluster = {"certificate-authority": "ca.crt", "tls-server-name": "api.test"}
    user = {"client-certificate": "client.crt", "client-key": "client.key"}
    assert answer(kubeconfig(tmp_path, server, cluster, user))["client"] == "alice"


def test_server_name_is_verified_unless_insecure(tmp_path, pki, server, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    user = {
        "client-certificate-data": data(pki / "client.crt"),
        "client-key-data": data(pki / "client.key"),
    }
    wrong_name = {"certificate-authority-data": data(pki / "ca.crt")}  # 127.0.0.1 not in SAN
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED|match"):
        answer(kubeconfig(tmp_path, server, wrong_name, user))
    unknown_ca = {"tls-server-name": "api.test"}  # system CAs do not know the test CA
    with pytest.raises(TransportError):
        answer(kubeconfig(tmp_path, server, unknown_ca, user))
    insecure = {"insecure-skip-tls-verify": True}
    assert answer(kubeconfig(tmp_path, server, insecure, user))["client"] == "alice"
    with pytest.raises(TransportError):  # no client certificate: the server refuses
        answer(kubeconfig(tmp_path, server, insecure, {}))


def test_exec_plugin_credentials_are_sent(tmp_path, pki, server, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1',"
        " 'kind': 'ExecCredential', 'status': {'token': 'from-exec'}}))\n"
    )
    cluster = {"certificate-authority-data": data(pki / "ca.crt"), "tls-server-name": "api.test"}
    user = {
        "client-certificate-data": data(pki / "client.crt"),
        "client-key-data": data(pki / "client.key"),
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [str(plugin)],
        },
    }
    got = answer(kubeconfig(tmp_path, server, cluster, user))
    assert got["authorization"] == "Bearer from-exec"
