"""Jobs ``tfjob submit --example NAME`` can submit without a file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tf_operator.sdk.builder import tfjob

# Each replica prints its TF_CONFIG task and peers, then exits 0: runs on any cluster that can
# pull a Python image, and on the local cluster, where containers are local processes.
_TF_CONFIG_CODE = (
    "import json, os, socket; c = json.loads(os.environ['TF_CONFIG']); "
    "print('task', c['task']['type'], c['task']['index'], 'on', socket.gethostname()); "
    "print('cluster', json.dumps(c['cluster'], sort_keys=True))"
)


def _tf_config() -> dict[str, Any]:
    return tfjob(
        "tf-config",
        image="python:3.11-slim",
        command=["python3", "-c", _TF_CONFIG_CODE],
        ps=1,
        workers=2,
        clean_pod_policy="None",
    )


def _dist_mnist() -> dict[str, Any]:
    # v0.5.3's e2e example: TensorFlow's dist_mnist.py with 2 parameter servers and 4 workers.
    return tfjob(
        "dist-mnist",
        image="kubeflow/tf-dist-mnist-test:1.0",
        ps=2,
        workers=4,
        restart_policy="Never",
    )


EXAMPLES: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "tf-config": ("1 PS + 2 workers print their TF_CONFIG (any Python image)", _tf_config),
    "dist-mnist": ("v0.5.3's distributed MNIST: 2 PS + 4 workers (real cluster)", _dist_mnist),
}


def example(name: str) -> dict[str, Any]:
    return EXAMPLES[name][1]()
