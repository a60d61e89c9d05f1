"""Build etcd, kube-apiserver, kube-controller-manager and kube-scheduler from Go modules.

Two small Go modules ship beside this file (``gomod/kubernetes`` and ``gomod/etcd``), each a
``go.mod`` + ``go.sum`` whose ``tool`` lines name the commands to build. They are kept apart
so that minimal version selection cannot lift a dependency the two share (grpc, otel, cel-go)
past what either upstream was tested with. The Kubernetes version is pinned in exactly one
place, the ``k8s.io/kubernetes`` requirement of ``gomod/kubernetes/go.mod``; its ``replace``
block (every staging module at ``v0.N.P``) is generated from that version's own ``go.mod`` in
the module cache by ``hack/update-control-plane.py``.

The binaries land in a cache outside the work tree, keyed by the versions and a digest of the
module files (``~/.cache/tf-operator/control-plane/<key>/bin``, or under
``$TF_OPERATOR_CONTROL_PLANE_CACHE``), and every later run, test and demo reuses them. A
directory of binaries built elsewhere can be named with ``$TF_OPERATOR_CONTROL_PLANE_BIN``
instead (as envtest's ``KUBEBUILDER_ASSETS``). Concurrent callers (pytest-xdist workers)
share one build through a file lock. Nothing here downloads a binary: Go fetches module
sources through its module proxy and compiles them, ``CGO_ENABLED=0`` as upstream releases.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

logger = logging.getLogger(__name__)

KUBE_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
ETCD_COMMAND = "etcd"
# The Go release Kubernetes' own go.mod asks for at the pinned version (its ``go`` line);
# checked before a build so that a too-old toolchain fails with a sentence, not a compile error.
_GO_LINE = re.compile(r"^go (\d+)\.(\d+)", re.MULTILINE)
_KUBE_PIN = re.compile(r"^\s*k8s\.io/kubernetes (v\d+\.\d+\.\d+)", re.MULTILINE)
_ETCD_PIN = re.compile(r"^\s*go\.etcd\.io/etcd/server/v3 (v\d+\.\d+\.\d+)", re.MULTILINE)
# How often a long build reports progress.
PROGRESS_SECONDS = 15.0

Progress = Callable[[str], None]


class ControlPlaneUnavailable(RuntimeError):
    """The real control plane cannot be had here; the message says what is missing."""


@dataclass(frozen=True)
class Binaries:
    """Paths of the four commands, and the versions they were built at."""

    directory: Path
    kubernetes_version: str
    etcd_version: str

    def path(self, command: str) -> str:
        return str(self.directory / command)


@dataclass(frozen=True)
class GoModule:
    """One of the shipped Go modules: where its files are and what it builds."""

    name: str
    go_mod: str
    go_sum: str
    commands: tuple[str, ...]

    @staticmethod
    def load(name: str, commands: tuple[str, ...]) -> GoModule:
        folder = resources.files("localcluster.controlplane.real").joinpath("gomod", name)
        return GoModule(
            name,
            folder.joinpath("go.mod").read_text(),
            folder.joinpath("go.sum").read_text(),
            commands,
        )

    def go_version(self) -> tuple[int, int]:
        found = _GO_LINE.search(self.go_mod)
        if found is None:
            raise ControlPlaneUnavailable(f"gomod/{self.name}/go.mod has no go line")
        return int(found.group(1)), int(found.group(2))

    def tool_paths(self) -> list[str]:
        """The package paths of the ``tool`` lines (a block or single lines)."""
        paths: list[str] = []
        in_block = False
        for raw in self.go_mod.splitlines():
            line = raw.strip()
            if line == "tool (":
                in_block = True
            elif in_block and line == ")":
                in_block = False
            elif in_block and line:
                paths.append(line)
            elif line.startswith("tool ") and not line.endswith("("):
                paths.append(line.split()[1])
        return paths


def pinned_versions() -> tuple[str, str]:
    """``(kubernetes, etcd)`` versions the shipped modules pin, e.g. ``("v1.37.2", "v3.7.0")``."""
    kube = GoModule.load("kubernetes", KUBE_COMMANDS)
    etcd = GoModule.load("etcd", (ETCD_COMMAND,))
    kube_pin, etcd_pin = _KUBE_PIN.search(kube.go_mod), _ETCD_PIN.search(etcd.go_mod)
    if kube_pin is None or etcd_pin is None:
        raise ControlPlaneUnavailable("the control plane's go.mod files name no version")
    return kube_pin.group(1), etcd_pin.group(1)


def cache_root() -> Path:
    configured = os.environ.get("TF_OPERATOR_CONTROL_PLANE_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "tf-operator" / "control-plane"


def cache_key() -> str:
    """Versions plus a digest of the module files: a changed go.sum builds afresh."""
    kube_version, etcd_version = pinned_versions()
    digest = hashlib.sha256()
    for name in ("kubernetes", "etcd"):
        module = GoModule.load(name, ())
        digest.update(module.go_mod.encode())
        digest.update(module.go_sum.encode())
    return f"kubernetes-{kube_version}-etcd-{etcd_version}-{digest.hexdigest()[:12]}"


def find_go() -> str:
    """The ``go`` command, or ControlPlaneUnavailable saying what is needed."""
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    kube_version, _ = pinned_versions()
    major, minor = GoModule.load("kubernetes", KUBE_COMMANDS).go_version()
    need = (
        f"the real control plane (Kubernetes {kube_version}) is built from Go modules on first "
        f"use and needs Go >= {major}.{minor} and the Go module proxy"
    )
    if go is None:
        raise ControlPlaneUnavailable(f"{need}: no `go` command found on PATH")
    out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=False)
    found = re.match(r"go(\d+)\.(\d+)", out.stdout.strip())
    if found is None or (int(found.group(1)), int(found.group(2))) < (major, minor):
        raise ControlPlaneUnavailable(f"{need}: found {out.stdout.strip() or 'an unknown Go'}")
    return go


def ensure_binaries(progress: Progress | None = None) -> Binaries:
    """The four binaries, built on first need; later calls return at once."""
    kube_version, etcd_version = pinned_versions()
    override = os.environ.get("TF_OPERATOR_CONTROL_PLANE_BIN")
    if override:
        directory = Path(override)
        missing = [c for c in (*KUBE_COMMANDS, ETCD_COMMAND) if not (directory / c).is_file()]
        if missing:
            raise ControlPlaneUnavailable(
                f"TF_OPERATOR_CONTROL_PLANE_BIN={override} lacks {', '.join(missing)}"
            )
        return Binaries(directory, kube_version, etcd_version)
    target = cache_root() / cache_key()
    binaries = Binaries(target / "bin", kube_version, etcd_version)
    if _complete(binaries):
        return binaries
    say = progress or _log_progress
    go = find_go()
    target.mkdir(parents=True, exist_ok=True)
    with _locked(target / ".lock"):
        if _complete(binaries):  # another process built them while we waited
            return binaries
        started = time.monotonic()
        say(
            f"building the real control plane (Kubernetes {kube_version}, etcd {etcd_version}) "
            f"from Go modules into {binaries.directory}; the first build takes a while"
        )
        staging = target / "bin.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        _build(
            go,
            GoModule.load("kubernetes", KUBE_COMMANDS),
            staging,
            _kube_ldflags(kube_version),
            say,
        )
        _build(go, GoModule.load("etcd", (ETCD_COMMAND,)), staging, "-s -w", say)
        (staging / "server").rename(
            staging / ETCD_COMMAND
        )  # the etcd main package is .../server/v3
        shutil.rmtree(binaries.directory, ignore_errors=True)
        staging.rename(binaries.directory)
        say(f"built the real control plane in {time.monotonic() - started:.0f} s")
    return binaries


def _complete(binaries: Binaries) -> bool:
    return all(os.access(binaries.path(c), os.X_OK) for c in (*KUBE_COMMANDS, ETCD_COMMAND))


def _kube_ldflags(version: str) -> str:
    """Stamp the version as Kubernetes' ``hack/lib/version.sh`` does (else ``v0.0.0-master``)."""
    major, minor, _ = version.lstrip("v").split(".", 2)
    base = "k8s.io/component-base/version"
    stamps = {
        "gitVersion": version,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
    }
    return " ".join(["-s", "-w", *(f"-X {base}.{k}={v}" for k, v in stamps.items())])


def _build(go: str, module: GoModule, out: Path, ldflags: str, say: Progress) -> None:
    """``go build`` the module's tools into ``out``, from a scratch copy of the module."""
    with tempfile.TemporaryDirectory(prefix=f"control-plane-{module.name}-") as scratch:
        Path(scratch, "go.mod").write_text(module.go_mod)
        Path(scratch, "go.sum").write_text(module.go_sum)
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
        command = [
            go,
            "build",
            "-v",
            "-trimpath",
            "-ldflags",
            ldflags,
            "-o",
            f"{out}/",
            *module.tool_paths(),
        ]
        say(f"go build {' '.join(module.tool_paths())}")
        process = subprocess.Popen(
            command,
            cwd=scratch,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        tail: list[str] = []
        last_report = time.monotonic()
        downloaded = compiled = 0
        for line in _lines(process.stdout):
            if line.startswith("go: downloading"):
                downloaded += 1
            elif line and not line.startswith("go: "):
                compiled += 1
            tail = (tail + [line])[-30:]
            if time.monotonic() - last_report >= PROGRESS_SECONDS:
                say(
                    f"  {module.name}: {downloaded} modules downloaded, {compiled} packages "
                    f"compiled so far"
                )
                last_report = time.monotonic()
        if process.wait() != 0:
            raise ControlPlaneUnavailable(
                f"building {module.name} failed (exit {process.returncode}):\n" + "\n".join(tail)
            )


def _lines(stream: object) -> Iterator[str]:
    for line in stream:  # type: ignore[attr-defined]
        yield str(line).rstrip()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _log_progress(message: str) -> None:
    logger.info("%s", message)
