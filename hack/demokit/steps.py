"""The steps every demo takes on its local cluster with the operator's own client: install
CRDs, start ``tf-operator``. Apart from ``harness`` so that the benchmark kit, which uses the
harness's process handling, does not import the operator through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from demokit.harness import BIN, ROOT, Background, DemoError, wait_until


def install_crds(kube: Any, served: Any, *paths: Path) -> None:
    """Create the CRDs in ``paths`` (one already there is fine), then wait until ``served``
    (a resource of one of them) lists."""
    from tf_operator.k8s.client import CUSTOM_RESOURCE_DEFINITIONS, is_already_exists

    for path in paths:
        crd = yaml.safe_load(path.read_text())
        try:
            kube.resource(CUSTOM_RESOURCE_DEFINITIONS).create(crd)
        except Exception as err:
            if not is_already_exists(err):
                raise DemoError(f"installing {path.name} failed: {err}") from err
        print(f"installed CRD {crd['metadata']['name']} from {path.relative_to(ROOT)}")
    jobs = kube.resource(served)
    wait_until(lambda: jobs.list() is not None, 30, f"{served.plural} to be served")


def start_operator(workdir: Path, kubeconfig: str, *flags: str) -> Background:
    """``tf-operator`` on the local cluster, metrics on a free loopback port, text logs, with
    ``flags`` added."""
    operator = Background(
        "tf-operator",
        [
            str(BIN / "tf-operator"),
            f"--kubeconfig={kubeconfig}",
            "--monitoring-port=0",
            "--monitoring-address=127.0.0.1",
            "--json-log-format=false",
            *flags,
        ],
        workdir / "operator.log",
    )
    print(f"started tf-operator (pid {operator.proc.pid}, log {operator.log_path})")
    return operator
