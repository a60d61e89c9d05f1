"""The create-only review APIs: access reviews, rules reviews, token reviews and ``whoami``.

Nothing is stored: each POST answers with the object it was given plus a ``status``, as
kube-apiserver does. ``SelfSubjectAccessReview`` is what ``kubectl auth can-i`` sends (with
``Impersonate-*`` headers for ``--as``); ``SelfSubjectRulesReview`` serves ``can-i --list``,
``SelfSubjectReview`` serves ``kubectl auth whoami``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localcluster.apimachinery import errors
from localcluster.apimachinery.errors import StatusError
from localcluster.controlplane.emulated.auth.authorizer import Authorizer
from localcluster.controlplane.emulated.auth.requestinfo import RequestAttributes
from localcluster.controlplane.emulated.auth.tokens import TokenIssuer
from localcluster.controlplane.emulated.auth.user import MASTERS, UserInfo

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"

# (group, plural) -> (kind, namespaced)
REVIEW_KINDS: dict[tuple[str, str], tuple[str, bool]] = {
    (AUTHORIZATION, "selfsubjectaccessreviews"): ("SelfSubjectAccessReview", False),
    (AUTHORIZATION, "subjectaccessreviews"): ("SubjectAccessReview", False),
    (AUTHORIZATION, "localsubjectaccessreviews"): ("LocalSubjectAccessReview", True),
    (AUTHORIZATION, "selfsubjectrulesreviews"): ("SelfSubjectRulesReview", False),
    (AUTHENTICATION, "selfsubjectreviews"): ("SelfSubjectReview", False),
    (AUTHENTICATION, "tokenreviews"): ("TokenReview", False),
}


def _invalid(kind: str, group: str, field: str, message: str) -> StatusError:
    cause = errors.field_cause(field, message)
    return errors.invalid(kind, group, kind.lower() + "s", "", [cause])


def _attributes(kind: str, spec: dict[str, Any], namespace: str | None = None) -> RequestAttributes:
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if bool(resource) == bool(non_resource):
        raise _invalid(
            kind,
            AUTHORIZATION,
            "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )
    if non_resource:
        return RequestAttributes(
            verb=non_resource.get("verb", ""), path=non_resource.get("path", "")
        )
    if not isinstance(resource, dict):
        raise _invalid(kind, AUTHORIZATION, "spec.resourceAttributes", "must be an object")
    ns = resource.get("namespace", "")
    if namespace is not None:
        if ns and ns != namespace:
            raise _invalid(
                kind,
                AUTHORIZATION,
                "spec.resourceAttributes.namespace",
                "must match metadata.namespace",
            )
        ns = namespace
    return RequestAttributes(
        verb=resource.get("verb", ""),
        resource_request=True,
        api_group=resource.get("group", ""),
        api_version=resource.get("version", ""),
        resource=resource.get("resource", ""),
        subresource=resource.get("subresource", ""),
        namespace=ns,
        name=resource.get("name", ""),
    )


def _subject(spec: dict[str, Any]) -> UserInfo:
    if not spec.get("user") and not spec.get("groups"):
        raise _invalid(
            "SubjectAccessReview",
            AUTHORIZATION,
            "spec.user",
            "at least one of user or group must be specified",
        )
    return UserInfo(
        spec.get("user", ""),
        spec.get("uid", ""),
        tuple(spec.get("groups") or ()),
        dict(spec.get("extra") or {}),
    )


class Reviews:
    """Answers the review kinds in ``REVIEW_KINDS`` for an authenticated user."""

    def __init__(self, authorizer: Authorizer, tokens: TokenIssuer) -> None:
        self._authorizer = authorizer
        self._tokens = tokens
        self._handlers: dict[
            str, Callable[[dict[str, Any], UserInfo, str | None], dict[str, Any]]
        ] = {
            "SelfSubjectAccessReview": self._self_access,
            "SubjectAccessReview": self._subject_access,
            "LocalSubjectAccessReview": self._local_access,
            "SelfSubjectRulesReview": self._rules,
            "SelfSubjectReview": self._whoami,
            "TokenReview": self._token,
        }

    def create(
        self,
        group: str,
        plural: str,
        version: str,
        body: Any,
        user: UserInfo,
        namespace: str | None,
    ) -> dict[str, Any]:
        kind, _ = REVIEW_KINDS[(group, plural)]
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a {kind}")
        spec = body.get("spec")
        if not isinstance(spec, dict):
            spec = {}
        status = self._handlers[kind](spec, user, namespace)
        out_meta: dict[str, Any] = {"creationTimestamp": None}
        if namespace:
            out_meta["namespace"] = namespace
        return {
            "kind": kind,
            "apiVersion": f"{group}/{version}",
            "metadata": out_meta,
            "spec": spec,
            "status": status,
        }

    def _access(self, user: UserInfo, attrs: RequestAttributes) -> dict[str, Any]:
        decision = self._authorizer.authorize(user, attrs)
        status: dict[str, Any] = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
        return status

    def _self_access(self, spec: dict[str, Any], user: UserInfo, _ns: str | None) -> dict[str, Any]:
        return self._access(user, _attributes("SelfSubjectAccessReview", spec))

    def _subject_access(
        self, spec: dict[str, Any], _user: UserInfo, _ns: str | None
    ) -> dict[str, Any]:
        return self._access(_subject(spec), _attributes("SubjectAccessReview", spec))

    def _local_access(
        self, spec: dict[str, Any], _user: UserInfo, namespace: str | None
    ) -> dict[str, Any]:
        attrs = _attributes("LocalSubjectAccessReview", spec, namespace or "")
        return self._access(_subject(spec), attrs)

    def _rules(self, spec: dict[str, Any], user: UserInfo, _ns: str | None) -> dict[str, Any]:
        rules: list[dict[str, Any]] = []
        errs: list[str] = []
        if self._authorizer.mode == "AlwaysAllow" or MASTERS in user.groups:
            rules = [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
            ]
        more, errs = self._authorizer.rbac.resolver.rules_for(user, spec.get("namespace") or "")
        rules += more
        status: dict[str, Any] = {
            "resourceRules": [_rule_info(r, "resources") for r in rules if r.get("resources")],
            "nonResourceRules": [
                _rule_info(r, "nonResourceURLs") for r in rules if r.get("nonResourceURLs")
            ],
            "incomplete": False,
        }
        if errs:
            status["evaluationError"] = ", ".join(errs)
        return status

    def _whoami(self, _spec: dict[str, Any], user: UserInfo, _ns: str | None) -> dict[str, Any]:
        return {"userInfo": user.to_dict()}

    def _token(self, spec: dict[str, Any], _user: UserInfo, _ns: str | None) -> dict[str, Any]:
        audiences = tuple(spec.get("audiences") or ()) or self._tokens.audiences
        reviewed = self._tokens.authenticate(spec.get("token") or "", audiences)
        if reviewed is None:
            return {"authenticated": False, "user": {}, "error": "invalid bearer token"}
        return {"authenticated": True, "user": reviewed.to_dict(), "audiences": list(audiences)}


def _rule_info(rule: dict[str, Any], what: str) -> dict[str, Any]:
    out = {"verbs": list(rule.get("verbs") or [])}
    if what == "resources":
        out["apiGroups"] = list(rule.get("apiGroups") or [])
        out["resources"] = list(rule.get("resources") or [])
        if rule.get("resourceNames"):
            out["resourceNames"] = list(rule["resourceNames"])
    else:
        out["nonResourceURLs"] = list(rule.get("nonResourceURLs") or [])
    return out
