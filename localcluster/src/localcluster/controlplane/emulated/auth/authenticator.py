"""Who sent a request: the admin token, a service-account token, or nobody.

As kube-apiserver's union authenticator: no ``Authorization`` header (or a non-bearer one)
makes the request anonymous; a bearer token that is neither the admin token nor a valid
service-account token is rejected with 401, even where anonymous requests would be allowed.
Which user "anonymous" is depends on the listener (see ``APIServer``): ``system:anonymous`` on
an authenticated one, the ``system:unsecured`` superuser on an open one (the local cluster
without a token, like kube-apiserver's old insecure port).
"""

from __future__ import annotations

import secrets

from localcluster.apimachinery import errors
from localcluster.controlplane.emulated.auth.tokens import TokenIssuer
from localcluster.controlplane.emulated.auth.user import ALL_AUTHENTICATED, MASTERS, UserInfo

ADMIN_USER = UserInfo("localcluster-admin", groups=(MASTERS, ALL_AUTHENTICATED))
UNSECURED_USER = UserInfo("system:unsecured", groups=(MASTERS, ALL_AUTHENTICATED))


class Authenticator:
    def __init__(self, admin_token: str, tokens: TokenIssuer) -> None:
        self._admin_token = admin_token
        self.tokens = tokens

    def authenticate(self, authorization: str, anonymous: UserInfo) -> UserInfo:
        """The user behind an ``Authorization`` header value; 401 for a bad bearer token."""
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return anonymous
        token = value.strip()
        if token and secrets.compare_digest(token.encode(), self._admin_token.encode()):
            return ADMIN_USER
        user = self.tokens.authenticate(token) if token else None
        if user is None:
            raise errors.unauthorized()
        return user
