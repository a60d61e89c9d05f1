"""Fixtures: a running APIServer on a free port, a kubeconfig for it, and a kubectl runner that
always uses a fresh HOME (kubectl caches discovery and the server version under ~/.kube)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from localcluster.controlplane.emulated import APIServer
from localcluster.controlplane.emulated.server import kubeconfig

KUBECTL = "/usr/bin/kubectl"


@dataclass
class Kubectl:
    home: Path
    config: Path

    def __call__(
        self, *args: str, input: str | None = None, timeout: float = 60, check: bool = True
    ) -> subprocess.CompletedProcess:
        env = {**os.environ, "HOME": str(self.home), "KUBECONFIG": str(self.config)}
        proc = subprocess.run(
            [KUBECTL, *args],
            input=input,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc


@pytest.fixture
def apiserver() -> Iterator[APIServer]:
    server = APIServer(host="127.0.0.1", port=0, bookmark_interval=0.5)
    server.start()
    yield server
    server.stop()


def write_kubeconfig(server: APIServer, path: Path) -> Path:
    path.write_text(yaml.safe_dump(kubeconfig(server)))
    return path


@pytest.fixture
def kubeconfig_path(apiserver: APIServer, tmp_path: Path) -> Path:
    return write_kubeconfig(apiserver, tmp_path / "kubeconfig")


@pytest.fixture
def kubectl(kubeconfig_path: Path, tmp_path: Path) -> Kubectl:
    if not os.path.exists(KUBECTL):
        pytest.skip("kubectl is not installed")
    home = tmp_path / "home"
    home.mkdir()
    return Kubectl(home, kubeconfig_path)
