"""Self-signed serving certificates for ``tls=True``, made with the ``openssl`` command line tool.

The certificate is valid for ``127.0.0.1``, ``localhost``, the bind address and the in-cluster
names of the ``kubernetes`` Service (``kubernetes.default.svc...`` and its ClusterIP), and marked
as a CA, so a kubeconfig or a pod's ``ca.crt`` can name the certificate itself as its authority.
"""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
import tempfile
from pathlib import Path


def _san(host: str) -> str:
    names = {"IP:127.0.0.1", "DNS:localhost", "IP:10.96.0.1", "DNS:kubernetes"}
    names |= {
        f"DNS:kubernetes.{d}" for d in ("default", "default.svc", "default.svc.cluster.local")
    }
    try:
        ipaddress.ip_address(host)
        names.add(f"IP:{host}")
    except ValueError:
        names.add(f"DNS:{host}")
    return ",".join(sorted(names))


def make_self_signed(host: str, directory: str | None = None) -> tuple[str, str]:
    """Create ``(cert_path, key_path)``; raises RuntimeError when openssl is unavailable."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("tls=True needs the openssl command line tool")
    out = Path(directory or tempfile.mkdtemp(prefix="localcluster-tls-"))
    cert, key = out / "apiserver.crt", out / "apiserver.key"
    cmd = [
        openssl, "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-keyout", str(key), "-out", str(cert), "-days", "365", "-subj", "/CN=localcluster-apiserver",
        "-addext", f"subjectAltName={_san(host)}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
        "-addext", "extendedKeyUsage=serverAuth",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl failed: {proc.stderr.strip()}")
    return str(cert), str(key)


def server_context(cert: str, key: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx
