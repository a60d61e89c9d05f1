"""The certificates and keys one real control plane needs, made with the openssl command.

One CA signs everything: the API server's serving certificate (loopback and the in-cluster
names of the ``kubernetes`` Service), the client certificate kube-apiserver presents to
kubelets (``--kubelet-client-certificate``), the kubelets' serving certificate, and the
aggregation layer's front-proxy client certificate (``--proxy-client-cert-file``). A separate
RSA key pair signs and verifies service-account tokens. kube-controller-manager signs CSRs
with the CA (``--cluster-signing-*``) and publishes it as ``kube-root-ca.crt``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# The ``kubernetes`` Service's ClusterIP: the first address of the service range the API
# server is given (``SERVICE_CLUSTER_IP_RANGE``).
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
KUBERNETES_SERVICE_IP = "10.0.0.1"
_DAYS = "365"
_API_SERVER_NAMES = (
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
    "IP:127.0.0.1",
    f"IP:{KUBERNETES_SERVICE_IP}",
)


@dataclass(frozen=True)
class KeyPair:
    cert: str
    key: str


@dataclass(frozen=True)
class ControlPlanePKI:
    """Paths of every file; ``make`` writes them into one directory."""

    ca: KeyPair
    apiserver: KeyPair
    kubelet_client: KeyPair
    kubelet_serving: KeyPair
    front_proxy_client: KeyPair
    service_account_key: str
    service_account_public_key: str

    @staticmethod
    def make(directory: Path) -> ControlPlanePKI:
        openssl = shutil.which("openssl")
        if openssl is None:
            raise RuntimeError("the real control plane needs the openssl command line tool")
        directory.mkdir(parents=True, exist_ok=True)
        ca = _self_signed_ca(openssl, directory)
        pki = ControlPlanePKI(
            ca=ca,
            apiserver=_signed(
                openssl,
                directory,
                "apiserver",
                "/CN=kube-apiserver",
                ca,
                "serverAuth",
                _API_SERVER_NAMES,
            ),
            kubelet_client=_signed(
                openssl,
                directory,
                "kubelet-client",
                "/O=system:masters/CN=kube-apiserver-kubelet-client",
                ca,
                "clientAuth",
                (),
            ),
            kubelet_serving=_signed(
                openssl,
                directory,
                "kubelet-serving",
                "/O=system:nodes/CN=localcluster-kubelet",
                ca,
                "serverAuth",
                ("DNS:localhost", "IP:127.0.0.1"),
            ),
            # the aggregation layer's client identity (kube-apiserver's --proxy-client-*)
            front_proxy_client=_signed(
                openssl,
                directory,
                "front-proxy-client",
                "/CN=front-proxy-client",
                ca,
                "clientAuth",
                (),
            ),
            service_account_key=str(directory / "sa.key"),
            service_account_public_key=str(directory / "sa.pub"),
        )
        _run(openssl, "genrsa", "-out", pki.service_account_key, "2048")
        _run(
            openssl,
            "rsa",
            "-in",
            pki.service_account_key,
            "-pubout",
            "-out",
            pki.service_account_public_key,
        )
        return pki


def _run(openssl: str, *args: str) -> None:
    subprocess.run([openssl, *args], check=True, capture_output=True)


def _self_signed_ca(openssl: str, directory: Path) -> KeyPair:
    pair = KeyPair(str(directory / "ca.crt"), str(directory / "ca.key"))
    _run(
        openssl, "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-keyout", pair.key, "-out", pair.cert, "-days", _DAYS, "-subj", "/CN=localcluster-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    )  # fmt: skip
    return pair


def _signed(
    openssl: str,
    directory: Path,
    name: str,
    subject: str,
    ca: KeyPair,
    usage: str,
    alt_names: tuple[str, ...],
) -> KeyPair:
    pair = KeyPair(str(directory / f"{name}.crt"), str(directory / f"{name}.key"))
    csr = directory / f"{name}.csr"
    extensions = directory / f"{name}.ext"
    lines = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        f"extendedKeyUsage={usage}",
    ]
    if alt_names:
        lines.append("subjectAltName=" + ",".join(alt_names))
    extensions.write_text("\n".join(lines) + "\n")
    _run(
        openssl, "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-keyout", pair.key, "-out", str(csr), "-subj", subject,
    )  # fmt: skip
    _run(
        openssl, "x509", "-req", "-in", str(csr), "-CA", ca.cert, "-CAkey", ca.key,
        "-CAcreateserial", "-out", pair.cert, "-days", _DAYS, "-extfile", str(extensions),
    )  # fmt: skip
    csr.unlink()
    extensions.unlink()
    return pair
