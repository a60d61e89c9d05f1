"""``make demo ARGS=--xgboost`` (``--jax``, ``--paddle``) end to end: the kind's v1.9 example
runs to Succeeded on the local cluster, its replicas having met through the environment the
operator injects and computed together; no framework is needed (or pulled) for it."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "hack/demo.py"


@pytest.mark.parametrize(
    ("flag", "kind", "says", "replicas"),
    [
        (
            "--xgboost",
            "XGBoostJob",
            "rmse 2.0696 -> ",
            ("Master      succeeded=1", "Worker      succeeded=2"),
        ),
        ("--jax", "JAXJob", "psum 2", ("Worker      succeeded=2",)),
        (
            "--paddle",
            "PaddleJob",
            "PaddlePaddle works well on 2 nodes.",
            ("Worker      succeeded=2",),
        ),
    ],
)
def test_the_kinds_demo_runs_its_example_to_success(flag, kind, says, replicas):
    out = subprocess.run(
        [sys.executable, str(DEMO), flag], capture_output=True, text=True, timeout=170, cwd=ROOT
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"Succeeded   True   {kind}Succeeded" in out.stdout
    assert says in out.stdout
    for line in replicas:
        assert line in out.stdout
    assert "demo took" in out.stdout


def test_the_example_programs_import_no_framework():
    for program in (
        "xgboost/smoke-dist/xgboost_dist.py",
        "jax/cpu-demo/jax_dist.py",
        "paddle/simple-cpu/run_check.py",
    ):
        imports = [
            line.split()[1]
            for line in (ROOT / "examples" / program).read_text().splitlines()
            if line.startswith(("import ", "from "))
        ]
        assert not {"xgboost", "jax", "paddle"} & {name.split(".")[0] for name in imports}
