"""``make demo ARGS=--xgboost`` (``--jax``, ``--paddle``): training-operator v1.9's example of
that kind run for real by the operator on a local cluster.

Steps: start ``tf-operator-localcluster`` with the process kubelet, install the TFJob CRD and
the kind's from ``manifests/``, start ``tf-operator --enable-scheme tfjob --enable-scheme
<kind>`` against it, submit the kind's v1.9 example from ``examples/`` (its image and command
adapted: the program is plain Python beside it), show the replicas and the leading replica's
log while it runs, then the final status and that log's tail. The replicas find each other only
through the environment the operator injects (XGBoostJob: ``MASTER_ADDR``/``MASTER_PORT``/
``WORLD_SIZE``/``RANK``/``WORKER_ADDRS``; JAXJob: ``COORDINATOR_ADDRESS``/``COORDINATOR_PORT``/
``NUM_PROCESSES``/``PROCESS_ID``; PaddleJob: ``PADDLE_MASTER``/``PADDLE_NNODES``/
``PADDLE_JOB_ID`` and the pod IP through the downward API). Everything started here is torn
down on exit; exit code 0 only if the job Succeeded.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from demokit.harness import (
    CRD_FILE,
    ROOT,
    Background,
    DemoError,
    follow_pod_log,
    localise,
    preflight,
    run_timed,
    start_cluster,
)
from demokit.steps import install_crds, start_operator

TERMINAL = ("Succeeded", "Failed")
# How often the job and its pods are read while it runs.
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class KindDemo:
    flag: str  # what selects it: --xgboost
    kind: str
    scheme: str  # --enable-scheme's name
    example: Path
    leader: str  # the replica whose log is shown, <job>-<leader>
    # the log lines worth a progress line
    progress: tuple[str, ...]

    @property
    def crd(self) -> Path:
        return ROOT / "manifests/components" / self.scheme / "crd.yaml"


DEMOS = {
    d.flag: d
    for d in (
        KindDemo(
            "--xgboost",
            "XGBoostJob",
            "xgboostjob",
            ROOT / "examples/xgboost/smoke-dist/xgboostjob.yaml",
            "master-0",
            ("tracker", "round ", "rmse "),
        ),
        KindDemo(
            "--jax",
            "JAXJob",
            "jaxjob",
            ROOT / "examples/jax/cpu-demo/demo.yaml",
            "worker-0",
            ("process ", "psum", "step ", "eigenvalue"),
        ),
        KindDemo(
            "--paddle",
            "PaddleJob",
            "paddlejob",
            ROOT / "examples/paddle/simple-cpu/simple-cpu.yaml",
            "worker-0",
            ("node rank", "allreduce", "step ", "PaddlePaddle"),
        ),
    )
}


def watch(
    demo: KindDemo, client: Any, job: dict[str, Any], operator: Background, timeout: float
) -> dict[str, Any]:
    """Show the replicas and the leader's progress until the job ends; return its final object."""
    from tf_operator.sdk import job_state

    name = job["metadata"]["name"]
    lines: list[str] = []
    stop = threading.Event()
    reader = threading.Thread(
        target=follow_pod_log, args=(client, f"{name}-{demo.leader}", lines, stop), daemon=True
    )
    reader.start()
    shown, deadline = "", time.monotonic() + timeout
    try:
        while True:
            current = client.get(name)
            phases = " ".join(
                f"{p['metadata']['name'].removeprefix(name + '-')}="
                f"{(p.get('status') or {}).get('phase', '?')}"
                for p in client.get_pods(name)
            )
            said = [line for line in lines if line.startswith(demo.progress)]
            line = f"[{job_state(current)}] {phases or 'no pods yet'} | {said[-1] if said else ''}"
            if line != shown:
                print(line.rstrip(" |"), flush=True)
                shown = line
            if job_state(current) in TERMINAL:
                return dict(current)
            if not operator.alive():
                raise DemoError(f"tf-operator exited:\n{operator.tail()}")
            if time.monotonic() > deadline:
                raise DemoError(f"job not finished after {timeout:.0f}s ({job_state(current)})")
            stop.wait(POLL_SECONDS)
    finally:
        stop.set()
        reader.join(5)
        if lines:
            print(f"\n{name}-{demo.leader}'s log (how it ended):\n  " + "\n  ".join(lines[-4:]))


def parse_args(argv: list[str]) -> tuple[KindDemo, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    for flag, demo in DEMOS.items():
        group.add_argument(flag, action="store_true", help=f"run the {demo.kind} example")
    parser.add_argument("--job", type=Path, help="submit this job's YAML (of the kind) instead")
    parser.add_argument("--timeout", type=float, default=150, help="seconds to wait for the job")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = parser.parse_args(argv)
    (demo,) = [d for flag, d in DEMOS.items() if getattr(args, flag.lstrip("-"))]
    return demo, args


def example_job(demo: KindDemo, workdir: Path) -> dict[str, Any]:
    """The kind's example run by this interpreter, in its directory."""
    from tf_operator.sdk.kinds import KINDS

    field = KINDS[demo.kind].specs_field
    job = localise(yaml.safe_load(demo.example.read_text()), workdir, demo.example.parent, field)
    for spec in job["spec"][field].values():
        for container in spec["template"]["spec"]["containers"]:
            container["workingDir"] = str(demo.example.parent)
    return job


def run(demo: KindDemo, args: argparse.Namespace, workdir: Path, started: list[Background]) -> int:
    preflight()
    from tf_operator.k8s.client import NAMESPACES
    from tf_operator.sdk import JobClient, job_state
    from tf_operator.sdk.kinds import KINDS

    kind = KINDS[demo.kind]
    job = yaml.safe_load(args.job.read_text()) if args.job else example_job(demo, workdir)
    namespace = job["metadata"].get("namespace", "default")
    cluster, kubeconfig = start_cluster(workdir)
    started.append(cluster)
    client = JobClient(kubeconfig, namespace, kind=kind)
    install_crds(client.kube, kind.resource, CRD_FILE, demo.crd)
    if namespace != "default":
        client.kube.resource(NAMESPACES).create({"metadata": {"name": namespace}})
    operator = start_operator(
        workdir,
        kubeconfig,
        "--enable-scheme=tfjob",
        f"--enable-scheme={demo.scheme}",
        "--no-leader-elect",
    )
    started.append(operator)
    client.create(job)
    print(f"submitted {demo.kind} {job['metadata']['name']} in namespace {namespace}")
    final = watch(demo, client, job, operator, args.timeout)
    status = final.get("status") or {}
    print(f"\nFinal {demo.kind} status:")
    for cond in status.get("conditions") or []:
        print(
            f"  {cond['type']:<11} {cond['status']:<6} {cond.get('reason', '')}: "
            f"{cond.get('message', '')}"
        )
    for rtype, counts in sorted((status.get("replicaStatuses") or {}).items()):
        shown = {k: v for k, v in counts.items() if k != "selector"}
        print(f"  {rtype:<11} " + ", ".join(f"{k}={v}" for k, v in sorted(shown.items())))
    return 0 if job_state(final) == "Succeeded" else 1


def main(argv: list[str] | None = None) -> int:
    demo, args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_timed(
        lambda workdir, started: run(demo, args, workdir, started),
        f"{demo.scheme}-demo-",
        args.keep,
    )


if __name__ == "__main__":
    sys.exit(main())
