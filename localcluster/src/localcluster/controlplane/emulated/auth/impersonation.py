"""``Impersonate-User`` / ``-Group`` / ``-Uid`` / ``-Extra-*``: act as another user.

Like kube-apiserver's impersonation filter: each requested identity is authorized first with
the ``impersonate`` verb (on ``users``, ``groups``, ``serviceaccounts`` in the account's
namespace, ``uids`` or ``userextras/<key>``); a service account gets its two service-account
groups when no groups are requested; every impersonated user except ``system:anonymous`` gets
``system:authenticated`` unless groups were requested (then they are the whole truth).
"""

from __future__ import annotations

from localcluster.apimachinery import errors
from localcluster.controlplane.emulated.auth.authorizer import Authorizer
from localcluster.controlplane.emulated.auth.requestinfo import RequestAttributes
from localcluster.controlplane.emulated.auth.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    UserInfo,
    service_account_groups,
    split_service_account_username,
)

USER_HEADER = "impersonate-user"
GROUP_HEADER = "impersonate-group"
UID_HEADER = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"


def _impersonate(
    resource: str, name: str, namespace: str = "", group: str = ""
) -> RequestAttributes:
    subresource = ""
    if "/" in resource:
        resource, subresource = resource.split("/", 1)
    return RequestAttributes(
        verb="impersonate",
        resource_request=True,
        api_group=group,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def impersonate(headers: dict[str, str], requestor: UserInfo, authorizer: Authorizer) -> UserInfo:
    """The user to act as (``requestor`` itself when no impersonation header is present)."""
    username = headers.get(USER_HEADER, "")
    groups_requested = _split(headers.get(GROUP_HEADER, ""))
    uid = headers.get(UID_HEADER, "")
    extras = {
        k[len(EXTRA_PREFIX) :]: _split(v) for k, v in headers.items() if k.startswith(EXTRA_PREFIX)
    }
    if not (username or groups_requested or uid or extras):
        return requestor
    if not username:
        raise errors.internal_error("requested impersonation of groups or extras without a user")
    checks: list[RequestAttributes] = []
    groups: list[str] = []
    account = split_service_account_username(username)
    if account is not None:
        checks.append(_impersonate("serviceaccounts", account[1], account[0]))
        if not groups_requested:
            groups += service_account_groups(account[0])
    else:
        checks.append(_impersonate("users", username))
    for group in groups_requested:
        checks.append(_impersonate("groups", group))
        groups.append(group)
    if uid:
        checks.append(_impersonate("uids", uid, group="authentication.k8s.io"))
    for key, values in extras.items():
        for value in values:
            checks.append(_impersonate(f"userextras/{key}", value, group="authentication.k8s.io"))
    for attrs in checks:
        authorizer.check(requestor, attrs)
    authenticated = {ALL_AUTHENTICATED, ALL_UNAUTHENTICATED} & set(groups)
    if not groups_requested and username != ANONYMOUS and not authenticated:
        groups.append(ALL_AUTHENTICATED)
    return UserInfo(username, uid, tuple(groups), extras)
