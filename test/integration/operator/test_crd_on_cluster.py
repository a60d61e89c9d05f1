"""The TFJob CRD served by the local cluster: kubectl applies the examples, the schema
rejects bad values, the printer columns show up. No operator runs here."""

import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(
    p
    for p in (ROOT / "examples").rglob("*.yaml")
    if any(d and d.get("kind") == "TFJob" for d in yaml.safe_load_all(p.read_text()))
)


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    from localcluster import testing
    from localcluster.cluster import LocalCluster

    home = tmp_path_factory.mktemp("home")
    with LocalCluster(kubelet="none") as cluster:

        def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
            return testing.kubectl(cluster, *args, home=str(home), input=stdin)

        out = run("apply", "-f", str(ROOT / "manifests/base/crd.yaml"))
        assert out.returncode == 0, out.stderr
        for ns in ("kubeflow", "kf-latest"):
            # (`kubectl create namespace` sends protobuf, which the emulator does not decode)
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            created = run("apply", "-f", "-", stdin=yaml.safe_dump(namespace))
            assert created.returncode == 0, created.stderr
        yield run


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_apply(kubectl, path):
    out = kubectl("apply", "-f", str(path))
    assert out.returncode == 0, out.stderr
    assert "tfjob.kubeflow.org/" in out.stdout


def test_bad_restart_policy_is_rejected(kubectl):
    job = yaml.safe_load((ROOT / "examples/v1/dist-mnist/tf_job_mnist.yaml").read_text())
    job["metadata"]["name"] = "bad-policy"
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "Sometimes"
    out = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(job))
    assert out.returncode != 0
    assert "Unsupported value" in out.stderr and "Sometimes" in out.stderr


def test_short_name_and_state_column(kubectl):
    job = yaml.safe_load((ROOT / "examples/v1/dist-mnist/tf_job_mnist.yaml").read_text())
    job["metadata"]["name"] = "state-column"
    created = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(job))
    assert created.returncode == 0, created.stderr
    out = kubectl("get", "tfjob", "-A")
    assert out.returncode == 0, out.stderr
    header = out.stdout.splitlines()[0].split()
    assert "STATE" in header and "AGE" in header
    assert any(line.split()[1] == "state-column" for line in out.stdout.splitlines()[1:])
