"""Service-account tokens: claims, expiry, audiences and revocation by deletion."""

import pytest

from localcluster.controlplane.emulated import Registry
from localcluster.controlplane.emulated.auth.tokens import BoundObject, TokenIssuer

SA = ("", "v1", "serviceaccounts")
PODS = ("", "v1", "pods")


class Clock:
    now = 1_800_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def env():
    registry = Registry()
    clock = Clock()
    account = registry.create(SA, "default", {"metadata": {"name": "bot"}})
    yield registry, clock, TokenIssuer(registry, clock=clock), account
    registry.stop()


def test_token_authenticates_as_its_service_account(env):
    registry, _, tokens, account = env
    token, expiry = tokens.issue("default", account, 3600)
    assert expiry == 1_800_003_600
    user = tokens.authenticate(token)
    assert user.name == "system:serviceaccount:default:bot"
    assert user.uid == account["metadata"]["uid"]
    assert user.groups == (
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    )
    claims = tokens.claims(token)
    assert claims["sub"] == user.name and claims["aud"] == list(tokens.audiences)


def test_expired_tampered_foreign_and_wrong_audience_tokens_fail(env):
    registry, clock, tokens, account = env
    token, _ = tokens.issue("default", account, 600)
    head, body, sig = token.split(".")
    assert tokens.authenticate(f"{head}.{body}x.{sig}") is None
    assert TokenIssuer(registry).authenticate(token) is None  # another server's key
    assert tokens.authenticate(token, audiences=("vault",)) is None
    clock.now += 600 + 61
    assert tokens.authenticate(token) is None


def test_deleting_the_account_or_the_bound_pod_revokes(env):
    registry, _, tokens, account = env
    pod = registry.create(
        PODS,
        "default",
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    )
    bound = BoundObject("Pod", "p", pod["metadata"]["uid"])
    token, _ = tokens.issue("default", account, 3600, bound=bound)
    user = tokens.authenticate(token)
    assert user.extra["authentication.kubernetes.io/pod-name"] == ["p"]
    registry.delete(PODS, "default", "p")
    assert tokens.authenticate(token) is None
    other, _ = tokens.issue("default", account, 3600)
    registry.delete(SA, "default", "bot")
    registry.create(SA, "default", {"metadata": {"name": "bot"}})  # same name, new uid
    assert tokens.authenticate(other) is None
