"""An example job from ``examples/`` run on the local cluster's process kubelet.

The examples are written for a real cluster: a container image holding the code, mounted at
the path the container runs in. Here each container is a process of this interpreter: the
code's directory becomes its working directory, ``python`` this interpreter (unbuffered), and
the volumes that carried the code go.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def run_here(job: dict[str, Any], specs_field: str, code_dir: Path) -> dict[str, Any]:
    """``job`` (changed in place, and returned) with every replica's containers run from
    ``code_dir`` by this interpreter."""
    for spec in job["spec"][specs_field].values():
        pod = spec["template"]["spec"]
        pod.pop("volumes", None)
        for container in pod["containers"]:
            container.pop("volumeMounts", None)
            container["workingDir"] = str(code_dir)
            container["command"] = [sys.executable, "-u", *container["command"][1:]]
    return job
