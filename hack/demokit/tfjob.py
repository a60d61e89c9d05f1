"""``make demo``: a distributed training job run by the real operator on a local cluster.

Steps: start ``tf-operator-localcluster`` with the process kubelet (containers run as local
processes with their own loopback IPs and service DNS), install the TFJob CRD from
``manifests/``, start ``tf-operator`` against the cluster's kubeconfig, submit
``examples/v1/local-dist-training/tfjob.yaml`` (or ``--tfjob FILE``), show the replicas and the
chief's latest loss while it runs, then print the final TFJob status and the chief's log tail.
Talking to the cluster goes through the SDK (``tf_operator.sdk.TFJobClient``): the wait is
driven by a watch on the job and the loss by following the chief's log. ``--dashboard`` also
starts ``tf-operator-dashboard`` and prints its URL.
Everything started here is torn down on exit, also on Ctrl-C. Exit code 0 only if the job
Succeeded.

The example's YAML is written for a real cluster (code shipped in a ConfigMap mounted at
``/opt/train``); for the local cluster it is "localised": each container runs this
interpreter on the example's directory and the ConfigMap volume is dropped.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from demokit import disruption, steps
from demokit.harness import (
    BIN,
    CRD_FILE,
    EXAMPLES,
    Background,
    DemoError,
    localise,
    preflight,
    run_timed,
    start_cluster,
)

DEFAULT_NAMESPACE = "default"
TERMINAL = ("Succeeded", "Failed")


# ------------------------------------------------------------------ cluster steps


def install_crd(kube: Any) -> None:
    from tf_operator.sdk import TFJOBS

    steps.install_crds(kube, TFJOBS, CRD_FILE)


def ensure_namespace(kube: Any, namespace: str) -> None:
    from tf_operator.k8s.client import NAMESPACES, is_already_exists

    try:
        kube.resource(NAMESPACES).create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
    except Exception as err:
        if not is_already_exists(err):
            raise DemoError(f"creating namespace {namespace} failed: {err}") from err


def start_operator(workdir: Path, kubeconfig: str) -> Background:
    return steps.start_operator(workdir, kubeconfig, "--threadiness=2")


def start_dashboard(workdir: Path, kubeconfig: str, namespace: str) -> tuple[Background, str]:
    """``tf-operator-dashboard`` on a free loopback port; returns it and its URL."""
    try:
        import starlette  # noqa: F401 - only checking the optional extra is there
    except ImportError as err:
        raise DemoError("--dashboard needs the web extra: pip install -e '.[dashboard]'") from err
    dashboard = Background(
        "tf-operator-dashboard",
        [
            str(BIN / "tf-operator-dashboard"),
            f"--kubeconfig={kubeconfig}",
            f"--namespace={namespace}",
            "--port=0",
            "--allow-write",  # a throwaway local cluster: let the user try create and delete
        ],
        workdir / "dashboard.log",
        stdout_pipe=True,
    )
    line = dashboard.read_line(timeout=30)
    if "serving on http://" not in line:
        raise DemoError(f"the dashboard did not start: {line!r}\n{dashboard.tail()}")
    return dashboard, line.split()[3]


# ------------------------------------------------------------------ the job


def chief_replica(job: dict[str, Any]) -> str:
    """The replica type whose index 0 reports the loss: Chief, else Master, else Worker."""
    specs = job["spec"]["tfReplicaSpecs"]
    return next((t for t in ("Chief", "Master") if t in specs), "Worker")


def chief_pod_name(job: dict[str, Any]) -> str:
    return f"{job['metadata']['name']}-{chief_replica(job).lower()}-0"


def replica_summary(pods: list[dict[str, Any]]) -> str:
    parts = []
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        labels = pod["metadata"].get("labels", {})
        phase = (pod.get("status") or {}).get("phase", "Pending")
        if pod["metadata"].get("deletionTimestamp"):
            phase = "Terminating"
        parts.append(
            f"{labels.get('tf-replica-type', '?')}-{labels.get('tf-replica-index', '?')}:{phase}"
        )
    return " ".join(parts) or "no pods yet"


# Events worth a line of their own while the job runs (creations are summarised by the table).
QUIET_EVENTS = ("SuccessfulCreatePod", "SuccessfulCreateService")


class JobMonitor:
    """Prints the job's progress: a line of replica phases plus the chief's latest loss, and
    the job's notable events. Driven by the SDK: the TFJob watch behind ``wait_for_job`` and
    the chief's followed log call :meth:`on_job` / :meth:`on_log`; nothing polls."""

    def __init__(self, client: Any, job: dict[str, Any]) -> None:
        self.client = client
        self.name = job["metadata"]["name"]
        self.namespace = job["metadata"]["namespace"]
        self.tty = sys.stdout.isatty()
        self.state = "Pending"
        self.loss = ""
        self._seen_events: set[str] = set()
        self._last_line = ""
        self._lock = threading.Lock()
        self._follower: threading.Thread | None = None
        self._finished = False

    def on_job(self, job: dict[str, Any]) -> None:
        from tf_operator.sdk import job_state

        self.state = job_state(job)
        self.redraw()

    def on_log(self, line: str) -> None:
        if " loss " in line:
            self.loss = line.strip()
            self.redraw()

    def follow_chief(self, replica_type: str) -> None:
        """Feed the chief's log to :meth:`on_log` from a daemon thread until it exits."""

        def run() -> None:
            try:
                for _, line in self.client.get_logs(
                    self.name, self.namespace, replica_type, 0, follow=True
                ):
                    self.on_log(line)
            except Exception:  # noqa: BLE001 - the demo goes on without the loss column
                pass

        self._follower = threading.Thread(target=run, name="chief log", daemon=True)
        self._follower.start()

    def redraw(self) -> None:
        with self._lock:
            if self._finished:
                return
            for event_line in self._new_events():
                print(("\r\033[K" if self.tty else "") + event_line, flush=True)
                self._last_line = ""
            pods = self.client.get_pods(self.name, self.namespace)
            line = f"[{self.state}] {replica_summary(pods)}"
            line += f" | chief: {self.loss}" if self.loss else ""
            if line == self._last_line:
                return
            if self.tty:
                width = shutil.get_terminal_size().columns - 1
                print("\r\033[K" + line[:width], end="", flush=True)
            else:
                print(line, flush=True)
            self._last_line = line

    def finish(self) -> None:
        """Draw the last state, once the chief's log has ended (its final loss line)."""
        if self._follower is not None:
            self._follower.join(CHIEF_LOG_END_SECONDS)
        self.redraw()
        with self._lock:
            self._finished = True
            if self.tty:
                print()

    def _new_events(self) -> list[str]:
        """Messages of the TFJob's events not printed yet (pod restarts, failures, ...)."""
        lines = []
        for event in self.client.get_events(self.name, self.namespace):
            uid = event["metadata"].get("uid") or event["metadata"]["name"]
            if uid in self._seen_events:
                continue
            self._seen_events.add(uid)
            if event.get("reason") not in QUIET_EVENTS:
                lines.append(
                    f"  event {event.get('type')} {event.get('reason')}: {event.get('message')}"
                )
        return lines


# Between two checks that the operator still runs, the wait watches the job this long.
OPERATOR_CHECK_SECONDS = 5.0
# How long a finished job's chief log may take to end (it usually has already).
CHIEF_LOG_END_SECONDS = 5.0


def watch_job(
    client: Any, job: dict[str, Any], operator: Background, timeout: float
) -> dict[str, Any]:
    """Wait for the job to finish (SDK, watch-driven), showing its progress as it goes."""
    from tf_operator.sdk import WaitTimeout, job_state

    monitor = JobMonitor(client, job)
    monitor.follow_chief(chief_replica(job))
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            final: dict[str, Any] = client.wait_for_job(
                monitor.name,
                monitor.namespace,
                timeout=max(0.1, min(OPERATOR_CHECK_SECONDS, left)),
                callback=monitor.on_job,
            )
        except WaitTimeout as err:
            if not operator.alive():
                raise DemoError(
                    f"tf-operator exited with {operator.proc.returncode}:\n{operator.tail()}"
                ) from err
            if time.monotonic() >= deadline:
                state = job_state(err.job or {})
                raise DemoError(f"job not finished after {timeout:.0f}s (state {state})") from err
            continue
        monitor.finish()
        return final


def chief_log_tail(client: Any, job: dict[str, Any], lines: int) -> str:
    try:
        return "\n".join(
            line
            for _, line in client.get_logs(
                job["metadata"]["name"],
                job["metadata"]["namespace"],
                chief_replica(job),
                0,
                tail_lines=lines,
            )
        )
    except Exception:  # noqa: BLE001 - the pod may be gone
        return ""


def print_result(client: Any, job: dict[str, Any], final: dict[str, Any]) -> None:
    status = final.get("status") or {}
    print("\nFinal TFJob status:")
    for cond in status.get("conditions") or []:
        print(
            f"  {cond['type']:<11} {cond['status']:<6} {cond.get('reason', '')}: {cond.get('message', '')}"
        )
    for rtype, counts in sorted((status.get("replicaStatuses") or {}).items()):
        print(f"  {rtype:<11} " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    print(f"  startTime {status.get('startTime')}  completionTime {status.get('completionTime')}")
    print(f"\nLast lines of {chief_pod_name(job)}:")
    log = chief_log_tail(client, job, 8)
    print("  " + "\n  ".join(log.splitlines() or ["(no log)"]))


# ------------------------------------------------------------------ main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tfjob", type=Path, help="submit this TFJob YAML instead of the example")
    parser.add_argument(
        "--exitcode", action="store_true", help="run the variant whose worker crashes once (137)"
    )
    parser.add_argument(
        "--disruption",
        action="store_true",
        help="drain a worker's node under the job; it restarts the worker without spending its budget",
    )
    parser.add_argument("--timeout", type=float, default=150, help="seconds to wait for the job")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    parser.add_argument(
        "--dashboard", action="store_true", help="also start tf-operator-dashboard; print its URL"
    )
    return parser.parse_args(argv)


def run(args: argparse.Namespace, workdir: Path, started: list[Background]) -> int:
    preflight()
    from tf_operator.sdk import TFJobClient, job_state

    cluster, kubeconfig = start_cluster(workdir, disruption.CLUSTER_ARGS if args.disruption else ())
    started.append(cluster)
    client = TFJobClient(kubeconfig)
    install_crd(client.kube)
    operator = start_operator(workdir, kubeconfig)
    started.append(operator)

    if args.tfjob:
        job = yaml.safe_load(args.tfjob.read_text())
    else:
        job = localise(yaml.safe_load(EXAMPLES[args.exitcode].read_text()), workdir)
    namespace = job["metadata"].setdefault("namespace", DEFAULT_NAMESPACE)
    ensure_namespace(client.kube, namespace)
    url = ""
    if args.dashboard:
        dashboard, url = start_dashboard(workdir, kubeconfig, namespace)
        started.append(dashboard)
    drained = threading.Event()
    if args.disruption:
        job = disruption.with_disruption_policy(job)
    client.create(job, namespace=namespace)
    print(f"submitted TFJob {job['metadata']['name']} in namespace {namespace}")
    if args.disruption:
        disruption.drain_when_running(kubeconfig, client, job, drained)
    if url:
        print(f"dashboard: {url}namespaces/{namespace}/tfjobs/{job['metadata']['name']}")
    final = watch_job(client, job, operator, args.timeout)
    print_result(client, job, final)
    if args.disruption:
        text, unspent = disruption.budget_report(final)
        print(f"\n{text}")
        if not (drained.is_set() and unspent):
            print("the worker's node was not drained, or its restart was counted")
            return 1
    if url and sys.stdin.isatty():
        with contextlib.suppress(EOFError):
            input(f"\nThe dashboard is still serving at {url} - press Enter to stop. ")
    return 0 if job_state(final) == "Succeeded" else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_timed(lambda workdir, started: run(args, workdir, started), "tfjob-demo-", args.keep)


if __name__ == "__main__":
    sys.exit(main())
