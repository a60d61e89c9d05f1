"""Service-account tokens: signed JWTs bound to a ServiceAccount (and optionally a Pod).

The claims are the ones kube-apiserver puts in a bound token (``iss``, ``sub``, ``aud``, ``exp``,
``iat``, ``nbf``, ``jti`` and the ``kubernetes.io`` block naming namespace, service account and
pod with their UIDs). A token authenticates only while it is unexpired, its audience includes
the API server's, its ServiceAccount still exists with the same UID and, when bound, its Pod
still exists with the same UID and is not long past deletion: deleting either revokes the token,
as in Kubernetes. Tokens are signed with HMAC-SHA256 and a per-server random key rather than
the real server's RS256 key pair: nothing outside this API server verifies them (there is no
OIDC discovery endpoint), so a symmetric key keeps the emulator free of crypto dependencies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta, parse_time
from localcluster.controlplane.emulated.auth.user import (
    ALL_AUTHENTICATED,
    UserInfo,
    service_account_groups,
    service_account_username,
)
from localcluster.controlplane.emulated.registry import Registry

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
CLOCK_SKEW_LEEWAY = 60  # seconds; kube-apiserver's leeway for exp/nbf and bound-pod deletion
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
PODS = ("", "v1", "pods")
EXTRA_POD_NAME = "authentication.kubernetes.io/pod-name"
EXTRA_POD_UID = "authentication.kubernetes.io/pod-uid"
EXTRA_CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"


@dataclass(frozen=True)
class BoundObject:
    """The object a token is bound to (only Pods are supported)."""

    kind: str
    name: str
    uid: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenIssuer:
    """Signs and verifies the server's service-account tokens (see module docstring)."""

    def __init__(
        self,
        registry: Registry,
        issuer: str = DEFAULT_ISSUER,
        audiences: tuple[str, ...] = (DEFAULT_ISSUER,),
        clock: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self._registry = registry
        self.issuer = issuer
        self.audiences = audiences
        self._clock = clock
        self._key = key or secrets.token_bytes(32)

    # ------------------------------------------------------------------ issuing
    def issue(
        self,
        namespace: str,
        service_account: dict[str, Any],
        expiration_seconds: int,
        audiences: list[str] | None = None,
        bound: BoundObject | None = None,
    ) -> tuple[str, int]:
        """A token for ``service_account`` (a stored object); returns ``(token, expiry)``."""
        now = int(self._clock())
        expiry = now + int(expiration_seconds)
        sa_meta = meta(service_account)
        scope: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": sa_meta.get("name"), "uid": sa_meta.get("uid")},
        }
        if bound is not None:
            scope[bound.kind.lower()] = {"name": bound.name, "uid": bound.uid}
        claims = {
            "aud": list(audiences or self.audiences),
            "exp": expiry,
            "iat": now,
            "iss": self.issuer,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": scope,
            "nbf": now,
            "sub": service_account_username(namespace, sa_meta.get("name", "")),
        }
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"{header}.{payload}.{self._sign(f'{header}.{payload}')}", expiry

    def _sign(self, signing_input: str) -> str:
        return _b64(hmac.new(self._key, signing_input.encode(), hashlib.sha256).digest())

    # ------------------------------------------------------------------ verifying
    def claims(self, token: str) -> dict[str, Any] | None:
        """The claims of a well-signed token of this issuer, or None (not checked for expiry)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        if not hmac.compare_digest(self._sign(f"{parts[0]}.{parts[1]}"), parts[2]):
            return None
        try:
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None
        if not isinstance(claims, dict) or claims.get("iss") != self.issuer:
            return None
        return claims

    def authenticate(self, token: str, audiences: tuple[str, ...] | None = None) -> UserInfo | None:
        """The service account ``token`` stands for, or None when it is not (or no longer) valid."""
        claims = self.claims(token)
        if claims is None or not self._current(claims):
            return None
        wanted = set(audiences or self.audiences)
        if not wanted & set(claims.get("aud") or []):
            return None
        scope = claims.get("kubernetes.io") or {}
        namespace = scope.get("namespace") or ""
        sa = scope.get("serviceaccount") or {}
        if not self._still_exists(SERVICE_ACCOUNTS, namespace, sa):
            return None
        extra = {EXTRA_CREDENTIAL_ID: [f"JTI={claims.get('jti', '')}"]}
        pod = scope.get("pod")
        if pod is not None:
            if not self._pod_valid(namespace, pod):
                return None
            extra[EXTRA_POD_NAME], extra[EXTRA_POD_UID] = [pod.get("name")], [pod.get("uid")]
        return UserInfo(
            name=service_account_username(namespace, sa.get("name", "")),
            uid=sa.get("uid", ""),
            groups=(*service_account_groups(namespace), ALL_AUTHENTICATED),
            extra=extra,
        )

    def _current(self, claims: dict[str, Any]) -> bool:
        now = self._clock()
        try:
            exp, nbf = float(claims["exp"]), float(claims.get("nbf", 0))
        except (KeyError, TypeError, ValueError):
            return False
        return nbf - CLOCK_SKEW_LEEWAY <= now < exp + CLOCK_SKEW_LEEWAY

    def _stored(
        self, gvr: tuple[str, str, str], namespace: str, name: str
    ) -> dict[str, Any] | None:
        try:
            return self._registry.get_shared(gvr, namespace, name)
        except StatusError:
            return None

    def _still_exists(self, gvr: tuple[str, str, str], namespace: str, ref: dict[str, Any]) -> bool:
        obj = self._stored(gvr, namespace, ref.get("name") or "")
        return obj is not None and meta(obj).get("uid") == ref.get("uid")

    def _pod_valid(self, namespace: str, ref: dict[str, Any]) -> bool:
        pod = self._stored(PODS, namespace, ref.get("name") or "")
        if pod is None or meta(pod).get("uid") != ref.get("uid"):
            return False
        deleting = parse_time(meta(pod).get("deletionTimestamp") or "")
        return deleting is None or deleting + CLOCK_SKEW_LEEWAY > self._clock()
