"""A small certificate authority for the local cluster, made with the ``openssl`` command line.

``CertificateAuthority.create`` makes a self-signed CA (ECDSA P-256, one year); ``issue`` signs a
serving certificate (``serverAuth``, for IP and DNS names) or a client certificate
(``clientAuth``, the subject's CN being the user and its O the groups, as Kubernetes reads a
client certificate). The kubelets' HTTPS server is served with one and accepts clients signed
by a CA it is given, as a kubelet accepts kube-apiserver's ``--kubelet-client-certificate``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

VALID_DAYS = 365
_CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert_file: str
    key_file: str


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA whose key stays in ``directory``; ``pair.cert_file`` is what peers trust."""

    pair: KeyPair
    directory: str

    @property
    def cert_file(self) -> str:
        return self.pair.cert_file

    @classmethod
    def create(cls, directory: str, common_name: str) -> CertificateAuthority:
        os.makedirs(directory, exist_ok=True)
        cert, key = os.path.join(directory, "ca.crt"), os.path.join(directory, "ca.key")
        _openssl(
            "req", "-x509", "-nodes", *_CURVE, "-keyout", key, "-out", cert,
            "-days", str(VALID_DAYS), "-subj", f"/CN={common_name}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,digitalSignature,keyCertSign,cRLSign",
        )  # fmt: skip
        return cls(KeyPair(cert, key), directory)

    def issue(
        self,
        name: str,
        common_name: str,
        *,
        organizations: tuple[str, ...] = (),
        ips: tuple[str, ...] = (),
        dns_names: tuple[str, ...] = (),
        client: bool = False,
    ) -> KeyPair:
        """Sign ``<name>.crt`` / ``<name>.key`` in the CA's directory."""
        cert = os.path.join(self.directory, f"{name}.crt")
        key = os.path.join(self.directory, f"{name}.key")
        csr = os.path.join(self.directory, f"{name}.csr")
        subject = f"/CN={common_name}" + "".join(f"/O={o}" for o in organizations)
        _openssl("req", "-new", "-nodes", *_CURVE, "-keyout", key, "-out", csr, "-subj", subject)
        extensions = [
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}",
        ]
        names = [f"IP:{ip}" for ip in ips] + [f"DNS:{d}" for d in dns_names]
        if names:
            extensions.append("subjectAltName=" + ",".join(names))
        ext_file = os.path.join(self.directory, f"{name}.ext")
        with open(ext_file, "w", encoding="utf-8") as f:
            f.write("\n".join(extensions) + "\n")
        _openssl(
            "x509", "-req", "-in", csr, "-CA", self.pair.cert_file, "-CAkey", self.pair.key_file,
            "-CAcreateserial", "-out", cert, "-days", str(VALID_DAYS), "-extfile", ext_file,
        )  # fmt: skip
        os.remove(csr)
        os.remove(ext_file)
        return KeyPair(cert, key)


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("certificates need the openssl command line tool")
    proc = subprocess.run([openssl, *args], capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {proc.stderr.strip()}")
