"""``RequestAuth``: the authentication, impersonation and authorization steps of one request.

One object per API server owns the token issuer, the authenticator, the authorizer and the
review handlers, so the HTTP layer makes one call per request (``admit``) and learns the user
the request runs as, or gets the 401/403 ``StatusError`` to send. ``decisions`` counts every
authorization decision by user, verb and resource (a minimal audit log: tests read which
operations a service account performed and which were denied).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

from localcluster.controlplane.emulated.auth.authenticator import Authenticator
from localcluster.controlplane.emulated.auth.authorizer import Authorizer, forbidden
from localcluster.controlplane.emulated.auth.impersonation import impersonate
from localcluster.controlplane.emulated.auth.requestinfo import (
    RequestAttributes,
    request_attributes,
)
from localcluster.controlplane.emulated.auth.reviews import Reviews
from localcluster.controlplane.emulated.auth.tokens import TokenIssuer
from localcluster.controlplane.emulated.auth.user import UserInfo
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.serving.httpcore import Request


class RequestAuth:
    def __init__(
        self,
        registry: Registry,
        admin_token: str,
        authorization_mode: str = "RBAC",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tokens = TokenIssuer(registry, clock=clock)
        self.authenticator = Authenticator(admin_token, self.tokens)
        self.authorizer = Authorizer(registry, authorization_mode)
        self.reviews = Reviews(self.authorizer, self.tokens)
        # (user, verb, API group, resource[/subresource] or path, allowed) -> count
        self.decisions: Counter[tuple[str, str, str, str, bool]] = Counter()
        self._lock = threading.Lock()

    def admit(self, req: Request, anonymous: UserInfo) -> UserInfo:
        """The user ``req`` runs as; raises 401 (bad credentials) or 403 (not allowed)."""
        user = self.authenticator.authenticate(req.header("authorization"), anonymous)
        user = impersonate(req.headers, user, self.authorizer)
        attrs = request_attributes(req.method, req.path, req.query)
        decision = self.authorizer.authorize(user, attrs)
        self._record(user, attrs, decision.allowed)
        if not decision.allowed:
            raise forbidden(user, attrs, decision.reason)
        return user

    def _record(self, user: UserInfo, attrs: RequestAttributes, allowed: bool) -> None:
        target = attrs.combined_resource if attrs.resource_request else attrs.path
        with self._lock:
            self.decisions[(user.name, attrs.verb, attrs.api_group, target, allowed)] += 1

    def decisions_of(self, username: str) -> dict[tuple[str, str, str, bool], int]:
        """``(verb, group, resource, allowed) -> count`` for one user."""
        with self._lock:
            return {k[1:]: n for k, n in self.decisions.items() if k[0] == username}
