"""YAML from users: aliases work, but a document cannot expand without bound or into itself
(issue 27, item 3: a 638-byte body took 2.5 GB through the dashboard's create)."""

import time

import pytest
import yaml

from support.yaml_alias_vectors import ALIAS_VECTORS, LAUGHS, MANIFEST, AliasVector
from tf_operator.k8s.safeyaml import MAX_EXPANDED_NODES, ExcessiveAliasing, load, load_all


@pytest.mark.parametrize("vector", ALIAS_VECTORS, ids=lambda v: v.name)
def test_the_alias_vectors_shared_with_the_local_api_server(vector: AliasVector):
    """The local API server's YAML reader (go-yaml's rule) classifies these alike."""
    if vector.refused:
        with pytest.raises(ExcessiveAliasing):
            load(vector.document)
    else:
        load(vector.document)


def test_a_billion_laughs_is_refused_at_once():
    assert len(LAUGHS) < 700
    started = time.monotonic()
    with pytest.raises(ExcessiveAliasing, match="expands to more than"):
        load(LAUGHS)
    with pytest.raises(ExcessiveAliasing):
        list(load_all(f"kind: TFJob\n---\n{LAUGHS}\n"))
    assert time.monotonic() - started < 1.0
    assert isinstance(ExcessiveAliasing("x"), yaml.YAMLError)  # reported as bad YAML


def test_a_document_containing_itself_is_refused():
    with pytest.raises(ExcessiveAliasing, match="contains itself"):
        load("a: &x [1, *x]")
    with pytest.raises(ExcessiveAliasing, match="contains itself"):
        load("&m {k: *m}")


def test_ordinary_aliases_and_merge_keys_still_work():
    doc = load(MANIFEST)
    assert doc["worker"] == {
        "image": "tf:1",
        "command": ["python", "train.py"],
        "name": "tensorflow",
    }
    assert doc["ps"] == doc["defaults"]
    assert list(load_all("a: 1\n---\nb: 2\n")) == [{"a": 1}, {"b": 2}]
    assert load("") is None


def test_the_bound_is_on_the_expansion_not_the_size():
    shared = "[" + ", ".join(["x"] * 999) + "]"
    fits = f"s: &s {shared}\nuse: [{', '.join(['*s'] * (MAX_EXPANDED_NODES // 1000 - 2))}]"
    assert len(load(fits)["use"]) == MAX_EXPANDED_NODES // 1000 - 2
    too_many = f"s: &s {shared}\nuse: [{', '.join(['*s'] * (MAX_EXPANDED_NODES // 1000 + 1))}]"
    with pytest.raises(ExcessiveAliasing):
        load(too_many)


# ---- every place YAML comes in from a user


def test_the_sdk_refuses_a_bomb_file(tmp_path):
    from tf_operator.sdk import load_job

    path = tmp_path / "job.yaml"
    path.write_text(LAUGHS)
    with pytest.raises(ExcessiveAliasing):
        load_job(str(path))


def test_a_kubeconfig_bomb_is_a_config_error(tmp_path):
    from tf_operator.k8s.client import ConfigError, load_kubeconfig

    path = tmp_path / "config"
    path.write_text(LAUGHS)
    with pytest.raises(ConfigError, match="expands to more than"):
        load_kubeconfig(str(path))


def test_tfjob_submit_refuses_a_bomb_in_one_line(tmp_path):
    from click.testing import CliRunner

    from tf_operator.cli.main import cli

    path = tmp_path / "job.yaml"
    path.write_text(LAUGHS)
    for args, given in ((["submit", str(path)], None), (["submit", "-"], LAUGHS)):
        started = time.monotonic()
        result = CliRunner().invoke(
            cli, ["--kubeconfig", str(tmp_path / "none"), *args], input=given
        )
        assert result.exit_code == 1, result.output
        assert result.output.count("\n") == 1 and "expands to more than" in result.output
        assert time.monotonic() - started < 2.0
