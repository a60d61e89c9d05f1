"""Kubeconfig and in-cluster loading without the official client (k8s/client/config.py)."""

import base64
import os

import pytest
import yaml

from tf_operator.k8s.client.config import (
    ClientConfig,
    ConfigError,
    FileToken,
    load_incluster,
    load_kubeconfig,
)


def write(path, doc):
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def kubeconfig(clusters, users, contexts, current=None):
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current:
        doc["current-context"] = current
    return doc


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_current_context_token_and_namespace(tmp_path):
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"k": {"server": "https://api.example:6443/", "insecure-skip-tls-verify": True}},
            {"u": {"token": "abc"}},
            {"c": {"cluster": "k", "user": "u", "namespace": "team"}},
            current="c",
        ),
    )
    cfg = load_kubeconfig(path)
    assert cfg.host == "https://api.example:6443"
    assert cfg.auth.authorization() == "Bearer abc"
    assert cfg.namespace == "team" and cfg.insecure
    assert cfg.with_host("http://other:1/").host == "http://other:1"
    assert cfg.with_host("http://other:1").auth is cfg.auth


def test_merged_files_first_wins_and_paths_resolve_against_their_file(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first = write(
        one / "config",
        kubeconfig(
            {"k": {"server": "https://first", "certificate-authority": "ca.crt"}},
            {"u": {"client-certificate": "u.crt", "client-key": "/abs/u.key"}},
            {"c": {"cluster": "k", "user": "u"}},
            current="c",
        ),
    )
    second = write(
        two / "config",
        kubeconfig(
            {"k": {"server": "https://second"}, "k2": {"server": "https://k2"}},
            {"u2": {"tokenFile": "token"}},
            {"c": {"cluster": "k2", "user": "u2"}, "c2": {"cluster": "k2", "user": "u2"}},
            current="c2",
        ),
    )
    (two / "token").write_text("from-file\n")
    cfg = load_kubeconfig(f"{first}{os.pathsep}{second}")
    assert cfg.host == "https://first"  # first file's cluster and current-context
    assert cfg.ca_file == str(one / "ca.crt")
    assert cfg.cert_file == str(one / "u.crt") and cfg.key_file == "/abs/u.key"
    other = load_kubeconfig(f"{first}{os.pathsep}{second}", context="c2")
    assert other.host == "https://k2"
    assert other.auth.authorization() == "Bearer from-file"


def test_inline_data_basic_auth_and_token_precedence(tmp_path):
    (tmp_path / "tok").write_text("file-token")
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"k": {"server": "https://k", "certificate-authority-data": b64(b"CA")}},
            {
                "both": {"token": "inline", "tokenFile": "tok"},
                "basic": {"username": "ann", "password": "s3cret"},
                "certs": {
                    "client-certificate-data": b64(b"CERT"),
                    "client-key-data": b64(b"KEY"),
                },
            },
            {
                "both": {"cluster": "k", "user": "both"},
                "basic": {"cluster": "k", "user": "basic"},
                "certs": {"cluster": "k", "user": "certs"},
            },
        ),
    )
    assert load_kubeconfig(path, "both").auth.authorization() == "Bearer inline"
    expected = "Basic " + b64(b"ann:s3cret")
    assert load_kubeconfig(path, "basic").auth.authorization() == expected
    certs = load_kubeconfig(path, "certs")
    assert certs.ca_data == b"CA" and certs.cert_data == b"CERT" and certs.key_data == b"KEY"
    assert certs.auth.authorization() is None


@pytest.mark.parametrize(
    ("doc", "context", "message"),
    [
        (kubeconfig({}, {}, {}), None, "no current-context"),
        (kubeconfig({}, {}, {"c": {"cluster": "k"}}), "c", "cluster 'k' of context 'c'"),
        (kubeconfig({"k": {}}, {}, {"c": {"cluster": "k"}}), "c", "has no server"),
        (kubeconfig({"k": {"server": "s"}}, {}, {}), "nope", "context 'nope' not found"),
        (
            kubeconfig(
                {"k": {"server": "s", "certificate-authority-data": "!!"}},
                {},
                {"c": {"cluster": "k"}},
            ),
            "c",
            "not valid base64",
        ),
    ],
)
def test_bad_kubeconfigs_are_refused_with_the_reason(tmp_path, doc, context, message):
    path = write(tmp_path / "config", doc)
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(path, context)


def test_missing_or_malformed_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_kubeconfig(str(tmp_path / "absent"))
    (tmp_path / "bad").write_text("clusters: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_kubeconfig(str(tmp_path / "bad"))


def test_token_file_is_read_again_after_the_refresh_period(tmp_path):
    token = tmp_path / "token"
    token.write_text("one")
    now = [0.0]
    source = FileToken(str(token), refresh=60.0, monotonic=lambda: now[0])
    token.write_text("two")
    assert source.authorization() == "Bearer one"
    now[0] = 61.0
    assert source.authorization() == "Bearer two"
    token.unlink()  # mid-rotation: the last token stays
    now[0] = 200.0
    assert source.authorization() == "Bearer two"


def test_incluster_reads_the_service_account(tmp_path):
    (tmp_path / "token").write_text("sa-token\n")
    (tmp_path / "ca.crt").write_text("x")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = load_incluster(env, str(tmp_path / "token"), str(tmp_path / "ca.crt"))
    assert cfg.host == "https://[fd00::1]:443"
    assert cfg.auth.authorization() == "Bearer sa-token"
    assert cfg.ca_file == str(tmp_path / "ca.crt")
    env4 = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "6443"}
    assert load_incluster(env4, str(tmp_path / "token"), str(tmp_path / "ca.crt")).host == (
        "https://10.0.0.1:6443"
    )
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        load_incluster({}, str(tmp_path / "token"), str(tmp_path / "ca.crt"))
    with pytest.raises(ConfigError, match="CA file"):
        load_incluster(env, str(tmp_path / "token"), str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="token"):
        load_incluster(env, str(tmp_path / "missing"), str(tmp_path / "ca.crt"))


def test_unreadable_certificate_material_is_a_config_error(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    cfg = ClientConfig(host="https://x", ca_data=b"not a certificate")
    with pytest.raises(ConfigError, match="certificate authority"):
        cfg.ssl_context()
    cfg = ClientConfig(host="https://x", insecure=True, cert_data=b"junk", key_data=b"junk")
    with pytest.raises(ConfigError, match="client certificate"):
        cfg.ssl_context()
    assert list(scratch.iterdir()) == []  # inline key material never stays on disk
