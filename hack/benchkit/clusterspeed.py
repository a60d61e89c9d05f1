"""The local cluster's own throughput, side by side with an older tree's (the
local cluster's create-throughput budget).

Every test, benchmark and demo runs on the local cluster, so its speed is measured against a
fixed point: the tree of main at ``BASELINE_COMMIT`` (8071805, the tree measured on
2026-11-23, when the local cluster was still the package ``tf_operator.localcluster``). Both
clusters run as processes of their own, started the same way (``python -m <module>`` with the
same flags, simulated kubelets, two nodes, the endpoints controller on), each from a
directory outside the repository so the working tree cannot shadow the installed package.
For each: the TFJob CRD and 200 TFJobs are created (not timed), then the bare client
(``benchkit.creates``, a process of its own) sends their 1,000 pods and 1,000 services from
four keep-alive connections. What counts is the wall time of those 2,000 creates and the
cluster process's CPU over them (user + system, from /proc); the rounds alternate between
the trees so a change in the machine's load hits both alike, and each tree's best round
counts (the least disturbed one), its others kept beside it.

The older tree gets a virtual environment of its own (an editable install's import hook
would otherwise win over anything else), built once from a temporary ``git worktree`` with a
plain ``pip install`` and kept under the project's venv (``.venv/bench-cache/``); the
worktree is removed as soon as the install is done.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchkit.floor import TFJOBS_PATH, Connection
from benchkit.paths import CRD_FILE, ROOT
from benchkit.workload import job_names, tfjob_manifest

BASELINE_COMMIT = "8071805"
BASELINE_MODULE = "tf_operator.localcluster"
TODAY_MODULE = "localcluster"
CACHE = Path(sys.prefix) / "bench-cache"
CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
JOBS = 200
THREADS = 4
ROUNDS = 3


@dataclass(frozen=True)
class Tree:
    label: str
    python: str
    module: str


def baseline_python(commit: str = BASELINE_COMMIT, log: Any = print) -> str:
    """The interpreter of a venv holding the tree at ``commit`` (built once, then reused)."""
    home = CACHE / f"localcluster-{commit}"
    python = home / "bin" / "python"
    marker = home / ".installed"
    if marker.exists() and python.exists():
        return str(python)
    shutil.rmtree(home, ignore_errors=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    log(f"   building a venv of {commit} in {home} (once)")
    checkout = Path(tempfile.mkdtemp(prefix=f"tree-{commit}-")) / "tree"
    git = ["git", "-C", str(ROOT)]
    added = subprocess.run([*git, "worktree", "add", "--detach", str(checkout), commit],
                           capture_output=True, text=True)  # fmt: skip
    if added.returncode != 0:
        shutil.rmtree(checkout.parent, ignore_errors=True)
        raise RuntimeError(f"git worktree add {commit} failed: {added.stderr.strip()}")
    try:
        made = subprocess.run([sys.executable, "-m", "venv", str(home)], capture_output=True)
        if made.returncode != 0:
            raise RuntimeError(f"creating the venv of {commit} failed: {made.stderr!r}")
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             str(checkout)],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if pip.returncode != 0:
            raise RuntimeError(f"installing {commit} failed:\n{pip.stdout}{pip.stderr}")
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(checkout)], check=False,
                       capture_output=True)  # fmt: skip
        subprocess.run([*git, "worktree", "prune"], check=False, capture_output=True)
        shutil.rmtree(checkout.parent, ignore_errors=True)
    marker.write_text(commit + "\n")
    return str(python)


def trees(log: Any = print) -> list[Tree]:
    return [
        Tree(f"main at {BASELINE_COMMIT}", baseline_python(log=log), BASELINE_MODULE),
        Tree("today", sys.executable, TODAY_MODULE),
    ]


class ClusterProcess:
    """A local cluster started from ``tree``, as its command line starts one."""

    def __init__(self, tree: Tree, workdir: Path, pods: int) -> None:
        argv = [
            tree.python, "-m", tree.module, "--kubelet", "simulated", "--nodes", "2",
            "--node-pods", str(pods // 2 + 10), "--node-cpu", "1000000",
            "--node-memory", "100000Gi", "--sim-start-delay", "0.1",
            "--watch-history", str(max(10000, pods * 12)), "--log-level", "warning",
            "--state-dir", str(workdir),
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBECONFIG")}
        self._log = open(workdir / "cluster.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv, cwd=workdir, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env
        )
        assert self.proc.stdout is not None
        words = self.proc.stdout.readline().split()
        if words[:1] != ["ready"]:
            self.stop()
            raise RuntimeError(f"{tree.label}: the cluster did not start: {words}")
        self.url, kubeconfig = words[1], words[2]
        users = yaml.safe_load(Path(kubeconfig).read_text())["users"]
        self.token: str | None = (users[0].get("user") or {}).get("token")

    def cpu(self) -> float:
        """User + system CPU seconds of the cluster process so far."""
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def install_jobs(url: str, token: str | None, jobs: int) -> None:
    """The TFJob CRD and ``jobs`` TFJobs, created over HTTP."""
    conn = Connection(url, token)
    status, body = conn.request("POST", CRDS_PATH, yaml.safe_load(CRD_FILE.read_text()))
    if status != 201:
        raise RuntimeError(f"creating the CRD: {status} {body}")
    deadline = time.monotonic() + 30
    while conn.request("GET", TFJOBS_PATH)[0] != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the TFJob CRD was not served within 30 s")
        time.sleep(0.05)
    for name in job_names(jobs):
        status, body = conn.request("POST", TFJOBS_PATH, tfjob_manifest(name))
        if status != 201:
            raise RuntimeError(f"creating TFJob {name}: {status} {body}")


def one_round(tree: Tree, jobs: int = JOBS, threads: int = THREADS) -> dict[str, Any]:
    """Start ``tree``'s cluster, install the jobs, time the bare client's creates."""
    with contextlib.ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="clusterspeed-"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        cluster = ClusterProcess(tree, workdir, jobs * 5)
        stack.callback(cluster.stop)
        install_jobs(cluster.url, cluster.token, jobs)
        argv = [sys.executable, "-m", "benchkit.creates", f"--server={cluster.url}",
                f"--threads={threads}"] + ([f"--token={cluster.token}"] if cluster.token else [])  # fmt: skip
        client = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=workdir
        )
        stack.callback(client.kill)
        assert client.stdin is not None and client.stdout is not None
        ready = client.stdout.readline().split()
        if ready[:1] != ["ready"]:
            raise RuntimeError(f"the creates client did not start: {ready}")
        time.sleep(1.0)  # the cluster's informers and kubelets have seen the jobs
        before = cluster.cpu()
        client.stdin.write("go\n")
        client.stdin.flush()
        result = json.loads(client.stdout.readline())
        server_cpu = cluster.cpu() - before
        client.wait(30)
    created = result["codes"].get("201", 0)
    return {
        "wall_s": result["wall_s"],
        "server_cpu_s": round(server_cpu, 3),
        "requests": result["requests"],
        "created": created,
        "complete": created == result["requests"] == jobs * 10,
        "load": round(os.getloadavg()[0], 2),
    }


def side_by_side(
    rounds: int = ROUNDS, jobs: int = JOBS, threads: int = THREADS, log: Any = print
) -> dict[str, Any]:
    """Alternate rounds of the older tree and today's; figures per tree and their ratios."""
    both = trees(log)
    runs: dict[str, list[dict[str, Any]]] = {t.label: [] for t in both}
    for i in range(rounds):
        for tree in both if i % 2 == 0 else reversed(both):
            run = one_round(tree, jobs, threads)
            log(f"   {tree.label}: {run}")
            runs[tree.label].append(run)
    out: dict[str, Any] = {"jobs": jobs, "threads": threads, "creates": jobs * 10}
    for tree, key in zip(both, ("baseline", "today"), strict=True):
        done = [r for r in runs[tree.label] if r["complete"]]
        best = min(done, key=lambda r: r["wall_s"]) if done else None
        out[key] = {
            "label": tree.label,
            "runs": runs[tree.label],
            "wall_s": best["wall_s"] if best else None,
            "server_cpu_s": min((r["server_cpu_s"] for r in done), default=None),
            "complete": len(done) == len(runs[tree.label]),
        }
    base, today = out["baseline"], out["today"]
    for figure in ("wall_s", "server_cpu_s"):
        if base[figure] and today[figure]:
            out[f"ratio_{figure}"] = round(today[figure] / base[figure], 3)
    out["baseline_commit"] = BASELINE_COMMIT
    return out


if __name__ == "__main__":
    print(json.dumps(side_by_side(), indent=1))
