"""``make demo ARGS=--in-cluster``: the demo with the operator deployed from ``manifests/``.

Where ``make demo`` runs ``tf-operator`` as a host process, this deploys it the way a user
does on a real cluster and drives everything with ``kubectl``: start the local cluster (process
kubelet: the operator's image runs the project's ``tf-operator`` script, with its service
account's token and in-cluster configuration, under RBAC), ``kubectl apply -k`` the overlay,
``kubectl rollout status``, submit the example TFJob (made local as ``make demo`` does), and
show the operator's pod next to the job's pods until the job finishes; then the job's status
and the operator's last log lines. Exit code 0 only if the job Succeeded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from demokit.harness import (
    EXAMPLES,
    ROOT,
    Background,
    DemoError,
    localise,
    run_steps,
    start_cluster,
)

OVERLAYS = ("standalone", "gang-kube-batch", "gang-volcano", "namespaced")
OPERATOR_NAMESPACE = "kubeflow"


class Kubectl:
    def __init__(self, kubeconfig: str, home: Path) -> None:
        self.env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(home)}

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        proc = subprocess.run(
            ["kubectl", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise DemoError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout


def step(title: str, output: str) -> None:
    print(f"\n$ {title}")
    print("  " + "\n  ".join(output.rstrip().splitlines()))


def job_state(kubectl: Kubectl, name: str, namespace: str) -> str:
    jsonpath = "{range .status.conditions[?(@.status=='True')]}{.type}{' '}{end}"
    states = kubectl("get", "tfjob", name, "-n", namespace, "-o", f"jsonpath={jsonpath}").split()
    return states[-1] if states else "Pending"


def pods_table(kubectl: Kubectl, namespaces: list[str]) -> str:
    rows = []
    for i, ns in enumerate(namespaces):
        table = kubectl("get", "pods", "-n", ns, "-o", "wide").splitlines()
        rows += [f"{'NAMESPACE':<10} {table[0]}"] if i == 0 and table else []
        rows += [f"{ns:<10} {row}" for row in table[1:]]
    return "\n".join(rows)


def run(args: argparse.Namespace, workdir: Path, started: list[Background]) -> int:
    cluster, kubeconfig = start_cluster(workdir)
    started.append(cluster)
    (workdir / "home").mkdir()
    kubectl = Kubectl(kubeconfig, workdir / "home")
    overlay = ROOT / "manifests/overlays" / args.overlay
    step(f"kubectl apply -k {overlay.relative_to(ROOT)}", kubectl("apply", "-k", str(overlay)))
    step(
        f"kubectl rollout status deployment/tf-job-operator -n {OPERATOR_NAMESPACE}",
        kubectl(
            "rollout",
            "status",
            "deployment/tf-job-operator",
            "-n",
            OPERATOR_NAMESPACE,
            "--timeout=120s",
        ),
    )
    job = localise(yaml.safe_load(EXAMPLES[args.exitcode].read_text()), workdir)
    namespace = OPERATOR_NAMESPACE if args.overlay == "namespaced" else "default"
    job["metadata"]["namespace"] = namespace
    step(
        "kubectl apply -f - (the example TFJob)",
        kubectl("apply", "-f", "-", stdin=yaml.safe_dump(job)),
    )
    name = job["metadata"]["name"]
    namespaces = sorted({OPERATOR_NAMESPACE, namespace})
    deadline = time.monotonic() + args.timeout
    last, pause = "", threading.Event()
    while (state := job_state(kubectl, name, namespace)) not in ("Succeeded", "Failed"):
        table = pods_table(kubectl, namespaces)
        if table != last:
            print(f"\n[{state}] the operator's pod and the job's pods:\n{table}", flush=True)
            last = table
        if time.monotonic() > deadline:
            raise DemoError(f"job not finished after {args.timeout:.0f}s (state {state})")
        pause.wait(1.0)
    print(f"\n[{state}] the operator's pod and the job's pods:\n{pods_table(kubectl, namespaces)}")
    step(f"kubectl get tfjob {name} -n {namespace}", kubectl("get", "tfjob", name, "-n", namespace))
    logs = kubectl("logs", "deployment/tf-job-operator", "-n", OPERATOR_NAMESPACE, "--tail=5")
    step(f"kubectl logs deployment/tf-job-operator -n {OPERATOR_NAMESPACE} --tail=5", logs)
    return 0 if state == "Succeeded" else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlay", choices=OVERLAYS, default="standalone")
    parser.add_argument(
        "--exitcode", action="store_true", help="the variant whose worker crashes once"
    )
    parser.add_argument("--timeout", type=float, default=150, help="seconds to wait for the job")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("kubectl") is None:
        print(
            "demo failed: --in-cluster drives the cluster with kubectl, which is not installed",
            file=sys.stderr,
        )
        return 1
    begin = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="tfjob-demo-incluster-"))
    code = run_steps(lambda started: run(args, workdir, started), workdir, args.keep)
    elapsed = time.monotonic() - begin
    print(f"\ndemo {'succeeded' if code == 0 else f'exits with {code}'} after {elapsed:.1f}s")
    return code


if __name__ == "__main__":
    sys.exit(main())
