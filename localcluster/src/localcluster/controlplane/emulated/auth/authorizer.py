"""The authorizer chain and the 403 it produces.

``RBAC`` mode is what kube-apiserver runs (``--authorization-mode=Node,RBAC`` minus the node
authorizer, which only concerns kubelets): members of ``system:masters`` are allowed at once,
as upstream's privileged-group authorizer does, everyone else goes through RBAC.
``AlwaysAllow`` skips authorization entirely; it exists for benchmarks that measure the
operator rather than the authorizer, and is never the default.
"""

from __future__ import annotations

from localcluster.apimachinery import errors
from localcluster.apimachinery.errors import StatusError
from localcluster.controlplane.emulated.auth.rbac import Decision, RBACAuthorizer
from localcluster.controlplane.emulated.auth.requestinfo import RequestAttributes
from localcluster.controlplane.emulated.auth.user import MASTERS, UserInfo
from localcluster.controlplane.emulated.registry import Registry

AUTHORIZATION_MODES = ("RBAC", "AlwaysAllow")


class Authorizer:
    def __init__(self, registry: Registry, mode: str = "RBAC") -> None:
        if mode not in AUTHORIZATION_MODES:
            raise ValueError(f"authorization mode must be one of {AUTHORIZATION_MODES}")
        self.mode = mode
        self.rbac = RBACAuthorizer(registry)

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        if self.mode == "AlwaysAllow" or MASTERS in user.groups:
            return Decision(True)
        return self.rbac.authorize(user, attrs)

    def check(self, user: UserInfo, attrs: RequestAttributes) -> None:
        """Raise the API server's 403 unless ``user`` may do ``attrs``."""
        decision = self.authorize(user, attrs)
        if not decision.allowed:
            raise forbidden(user, attrs, decision.reason)


def forbidden_message(user: UserInfo, attrs: RequestAttributes) -> str:
    if not attrs.resource_request:
        return f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (
        f'User "{user.name}" cannot {attrs.verb} resource "{attrs.combined_resource}" '
        f'in API group "{attrs.api_group}" {where}'
    )


def forbidden(user: UserInfo, attrs: RequestAttributes, reason: str = "") -> StatusError:
    """403 Forbidden worded as kube-apiserver's authorization filter words it."""
    why = forbidden_message(user, attrs)
    if reason:
        why = f"{why}: {reason}"
    if not attrs.resource_request:
        return StatusError(403, "Forbidden", f"forbidden: {why}")
    return errors.forbidden(attrs.api_group, attrs.resource, attrs.name, why)
