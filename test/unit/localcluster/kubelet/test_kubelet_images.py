"""The process kubelet's image table: matching references, entrypoint/cmd rules, discovery."""

import os

import pytest

from localcluster.kubelet.images import (
    ImageTable,
    LocalImage,
    container_command,
    discover,
    parse_image_option,
)

OPERATOR = LocalImage(entrypoint=("/venv/bin/tf-operator",), cmd=("--help",), path=("/venv/bin",))


@pytest.mark.parametrize(
    ("reference", "found"),
    [
        ("kubeflow/tf-operator-py", True),
        ("kubeflow/tf-operator-py:v0.5.3.post1", True),
        ("docker.io/kubeflow/tf-operator-py:latest", True),
        ("kubeflow/tf-operator-py@sha256:abc", True),
        ("kubeflow/tf-operator", False),
        ("quay.io/kubeflow/tf-operator-py", False),
        ("localhost:5000/kubeflow/tf-operator-py", False),
    ],
)
def test_lookup_by_repository(reference, found):
    table = ImageTable({"kubeflow/tf-operator-py": OPERATOR})
    assert (table.lookup(reference) is OPERATOR) is found


def test_tagged_entry_matches_only_its_tag():
    table = ImageTable({"busybox:1.36": OPERATOR})
    assert table.lookup("busybox:1.36") is OPERATOR
    assert table.lookup("docker.io/library/busybox:1.36") is OPERATOR
    assert table.lookup("busybox:1.35") is None and table.lookup("busybox") is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, (["/venv/bin/tf-operator"], ["--help"])),
        ({"args": ["--threadiness=2"]}, (["/venv/bin/tf-operator"], ["--threadiness=2"])),
        ({"command": ["tf-operator"]}, (["tf-operator"], [])),
        ({"command": ["sh"], "args": ["-c", "x"]}, (["sh"], ["-c", "x"])),
    ],
)
def test_command_and_args_follow_kubernetes_rules(spec, expected):
    assert container_command(spec, OPERATOR) == expected


def test_unknown_image_keeps_the_containers_own_command():
    assert container_command({"command": ["x"], "args": ["y"]}, None) == (["x"], ["y"])
    assert container_command({"args": ["y"]}, None) == ([], ["y"])


def test_discovery_finds_the_operator_image_of_this_environment():
    image = discover()["kubeflow/tf-operator-py"]
    (script,) = image.entrypoint
    assert os.path.basename(script) == "tf-operator" and os.access(script, os.X_OK)
    assert image.path == (os.path.dirname(script),)


def test_image_option():
    ref, image = parse_image_option("example/app=/opt/app/bin/run --fast")
    assert ref == "example/app"
    assert image == LocalImage(entrypoint=("/opt/app/bin/run", "--fast"), path=("/opt/app/bin",))
    with pytest.raises(ValueError):
        parse_image_option("no-command=")
