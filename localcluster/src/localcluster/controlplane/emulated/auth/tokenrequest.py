"""``POST .../serviceaccounts/<name>/token``: the TokenRequest API (``kubectl create token``).

Validates like kube-apiserver: the ServiceAccount must exist (404), ``expirationSeconds``
defaults to one hour and must be at least ten minutes and below 2^32 seconds (422), a
``boundObjectRef`` must name an existing Pod of the same service account whose UID matches
(404, 409, 400); the answer is the request with its defaults filled in and a ``status`` with the
token and its expiry.
"""

from __future__ import annotations

from typing import Any

from localcluster.apimachinery import errors
from localcluster.apimachinery.objects import format_time, meta
from localcluster.controlplane.emulated.auth.tokens import (
    PODS,
    SERVICE_ACCOUNTS,
    BoundObject,
    TokenIssuer,
)
from localcluster.controlplane.emulated.registry import Registry

DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32


def _invalid(name: str, field: str, message: str) -> errors.StatusError:
    cause = errors.field_cause(field, message)
    return errors.invalid("TokenRequest", "authentication.k8s.io", "tokenrequests", name, [cause])


def _bound_pod(
    registry: Registry, namespace: str, account: str, ref: dict[str, Any]
) -> BoundObject:
    if ref.get("kind") != "Pod":
        raise errors.bad_request(f"cannot bind token for object of kind {ref.get('kind')!r}")
    pod = registry.get_shared(PODS, namespace, ref.get("name") or "")
    uid = meta(pod).get("uid", "")
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(
            "",
            "pods",
            ref.get("name", ""),
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    if (pod.get("spec") or {}).get("serviceAccountName") != account:
        raise errors.bad_request(
            f'cannot bind token for serviceaccount "{account}" to pod running with different '
            "serviceaccount name."
        )
    return BoundObject("Pod", meta(pod).get("name", ""), uid)


def create_token(
    registry: Registry, tokens: TokenIssuer, namespace: str, name: str, body: Any, now: float
) -> dict[str, Any]:
    """Issue a token for ServiceAccount ``namespace/name`` as the TokenRequest ``body`` asks."""
    account = registry.get_shared(SERVICE_ACCOUNTS, namespace, name)
    spec = dict(body.get("spec") or {}) if isinstance(body, dict) else {}
    seconds = spec.get("expirationSeconds", DEFAULT_EXPIRATION_SECONDS)
    if not isinstance(seconds, int) or seconds < MIN_EXPIRATION_SECONDS:
        raise _invalid(
            name,
            "spec.expirationSeconds",
            f"Invalid value: {seconds}: may not specify a duration less than 10 minutes",
        )
    if seconds >= MAX_EXPIRATION_SECONDS:
        raise _invalid(
            name,
            "spec.expirationSeconds",
            f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds",
        )
    audiences = list(spec.get("audiences") or tokens.audiences)
    ref = spec.get("boundObjectRef")
    bound = _bound_pod(registry, namespace, name, ref) if ref else None
    token, expiry = tokens.issue(namespace, account, seconds, audiences, bound)
    spec.update(audiences=audiences, expirationSeconds=seconds)
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": format_time(now)},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": format_time(expiry)},
    }
