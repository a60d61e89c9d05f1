"""Client configuration and transport errors that need no server."""

import pytest

from tf_operator.k8s.client import PODS, ConfigError, TransportError, load_kube_client
from tf_operator.k8s.client.kube import DEFAULT_USER_AGENT


def test_connection_refused_is_transport_error():
    kc = load_kube_client(master="http://127.0.0.1:9")
    with pytest.raises(TransportError):
        kc.resource(PODS).list()
    with pytest.raises(TransportError):
        kc.resource(PODS).watch()


def test_load_kube_client_env_wins_and_master_overrides(tmp_path, monkeypatch):
    def kubeconfig(path, server):
        path.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
            "users: [{name: u, user: {token: secret-token}}]\n"
        )
        return str(path)

    flag = kubeconfig(tmp_path / "flag.yaml", "http://127.0.0.1:1111")
    env = kubeconfig(tmp_path / "env.yaml", "http://127.0.0.1:2222")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert load_kube_client(flag).host == "http://127.0.0.1:1111"
    monkeypatch.setenv("KUBECONFIG", env)
    kc = load_kube_client(flag)
    assert kc.host == "http://127.0.0.1:2222"
    assert kc.user_agent == DEFAULT_USER_AGENT
    assert load_kube_client(flag, user_agent="x/1").user_agent == "x/1"
    assert kc.config.auth.authorization() == "Bearer secret-token"
    assert load_kube_client(flag, master="http://127.0.0.1:3333/").host == "http://127.0.0.1:3333"
    monkeypatch.delenv("KUBECONFIG")
    assert load_kube_client(None, master="http://127.0.0.1:4444").host == "http://127.0.0.1:4444"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError):
        load_kube_client()
