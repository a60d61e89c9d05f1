"""``RequestAuth``: the authentication, impersonation and authorization steps of one request.

One object per API server owns the token issuer, the authenticator, the authorizer and the
review handlers, so the HTTP layer makes one call per request (``admit``) and learns the user
the request runs as, or gets the 401/403 ``StatusError`` to send.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..httpcore import Request
from .authenticator import Authenticator
from .authorizer import Authorizer
from .impersonation import impersonate
from .requestinfo import request_attributes
from .reviews import Reviews
from .tokens import TokenIssuer
from .user import UserInfo


class RequestAuth:
    def __init__(
        self,
        registry,
        admin_token: str,
        authorization_mode: str = "RBAC",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tokens = TokenIssuer(registry, clock=clock)
        self.authenticator = Authenticator(admin_token, self.tokens)
        self.authorizer = Authorizer(registry, authorization_mode)
        self.reviews = Reviews(self.authorizer, self.tokens)

    def admit(self, req: Request, anonymous: UserInfo) -> UserInfo:
        """The user ``req`` runs as; raises 401 (bad credentials) or 403 (not allowed)."""
        user = self.authenticator.authenticate(req.header("authorization"), anonymous)
        user = impersonate(req.headers, user, self.authorizer)
        self.authorizer.check(user, request_attributes(req.method, req.path, req.query))
        return user
