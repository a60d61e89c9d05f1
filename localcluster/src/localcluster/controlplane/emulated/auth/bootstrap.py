"""What kube-apiserver creates for itself at start: default RBAC policy, ``kubernetes`` Service.

The default ClusterRoles and ClusterRoleBindings: kube-apiserver's ``rbac/bootstrap-roles``
post-start hook creates them (labelled
``kubernetes.io/bootstrapping: rbac-defaults``) and leaves existing ones alone; so does
``ensure``. Only the roles that matter without a controller manager are seeded:
``cluster-admin`` for ``system:masters``; ``system:discovery`` (API discovery and OpenAPI) and
``system:basic-user`` (self access and rules reviews, ``whoami``) for every authenticated
user; ``system:public-info-viewer`` (``/healthz``, ``/livez``, ``/readyz``, ``/version``) for
everyone, anonymous included.
"""

from __future__ import annotations

from typing import Any

from localcluster.apimachinery.errors import StatusError
from localcluster.controlplane.emulated.auth.rbac import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES
from localcluster.controlplane.emulated.auth.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    MASTERS,
)
from localcluster.controlplane.emulated.registry import Registry

KUBERNETES_SERVICE_IP = "10.96.0.1"
SERVICES = ("", "v1", "services")
ENDPOINTS = ("", "v1", "endpoints")
_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

_PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_DISCOVERY = [
    "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
    "/readyz", "/version", "/version/",
]  # fmt: skip

CLUSTER_ROLE_RULES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ],
    "system:discovery": [{"nonResourceURLs": _DISCOVERY, "verbs": ["get"]}],
    "system:public-info-viewer": [{"nonResourceURLs": _PUBLIC_INFO, "verbs": ["get"]}],
    "system:basic-user": [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"],
            "verbs": ["create"],
        },
    ],
}

CLUSTER_ROLE_BINDING_GROUPS: dict[str, list[str]] = {
    "cluster-admin": [MASTERS],
    "system:discovery": [ALL_AUTHENTICATED],
    "system:basic-user": [ALL_AUTHENTICATED],
    "system:public-info-viewer": [ALL_AUTHENTICATED, ALL_UNAUTHENTICATED],
}


def _metadata(name: str) -> dict[str, Any]:
    return {"name": name, "labels": dict(_LABELS), "annotations": dict(_ANNOTATIONS)}


def cluster_roles() -> list[dict[str, Any]]:
    return [
        {"metadata": _metadata(name), "rules": rules} for name, rules in CLUSTER_ROLE_RULES.items()
    ]


def cluster_role_bindings() -> list[dict[str, Any]]:
    return [
        {
            "metadata": _metadata(name),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": name,
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}
                for g in groups
            ],
        }
        for name, groups in CLUSTER_ROLE_BINDING_GROUPS.items()
    ]


def ensure(registry: Registry) -> None:
    """Create the bootstrap roles and bindings that do not exist yet."""
    for gvr, objects in (
        (CLUSTER_ROLES, cluster_roles()),
        (CLUSTER_ROLE_BINDINGS, cluster_role_bindings()),
    ):
        for obj in objects:
            try:
                registry.create(gvr, None, obj)
            except StatusError as err:
                if err.code != 409:
                    raise


def _advertise_address(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "localhost", "") else host


def ensure_kubernetes_service(registry: Registry, host: str, secure_url: str) -> None:
    """The ``kubernetes`` Service and Endpoints in ``default``, pointing at ``secure_url``.

    kube-apiserver keeps these for in-cluster clients. There is no kube-proxy here, so the
    Service's port is the secure listener's own port rather than 443: a process that dials
    ``kubernetes.default.svc`` (which cluster DNS resolves to the endpoint address) reaches the
    API server on the port the Service names.
    """
    port = int(secure_url.rsplit(":", 1)[1])
    address = _advertise_address(host)
    service = {
        "metadata": {
            "name": "kubernetes",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "clusterIP": KUBERNETES_SERVICE_IP,
            "ports": [{"name": "https", "port": port, "protocol": "TCP", "targetPort": port}],
            "type": "ClusterIP",
        },
    }
    endpoints = {
        "metadata": {
            "name": "kubernetes",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [
            {
                "addresses": [{"ip": address}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            }
        ],
    }
    for gvr, obj in ((SERVICES, service), (ENDPOINTS, endpoints)):
        try:
            current = registry.get(gvr, "default", "kubernetes")
        except StatusError:
            registry.create(gvr, "default", obj)
            continue
        registry.update(
            gvr,
            "default",
            "kubernetes",
            {**current, **{k: v for k, v in obj.items() if k != "metadata"}},
        )
