"""The Kubeflow Training SDK v1.9 (``kubeflow-training`` from PyPI) in a venv of its own.

The SDK is what training-operator v1 users script against; tests drive our operator through it
unchanged. It is never a dependency of the operator or of the test venv (it pins its own
``kubernetes`` client), so it gets a venv beside the test venv (under ``sys.prefix``, so
``make clean`` removes it with the rest): made on first use, reused by every later run while
its stamp names the same requirement. pytest-xdist workers take a file lock, so one of them
installs and the others wait for it.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import venv
from pathlib import Path

REQUIREMENT = "kubeflow-training==1.9.4"
VENV_DIR = Path(sys.prefix) / "kubeflow-training-sdk"
INSTALL_TIMEOUT_S = 600


def sdk_python() -> Path:
    """The interpreter of a venv holding :data:`REQUIREMENT`, installed if it is not yet."""
    python = VENV_DIR / "bin" / "python"
    stamp = VENV_DIR / ".installed"
    VENV_DIR.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{VENV_DIR}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == REQUIREMENT:
            return python
        stamp.unlink(missing_ok=True)
        venv.EnvBuilder(clear=True, with_pip=True).create(VENV_DIR)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", REQUIREMENT],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip install {REQUIREMENT} failed:\n{done.stdout}{done.stderr}")
        stamp.write_text(REQUIREMENT)
    return python
