#!/usr/bin/env python3
"""Benchmark: how fast and how lean is a pod informer over 10,000 pods?

The API server runs in a child process (so its own copy of the pods does not
count against the informer): the local cluster's emulated API server when
available, else a minimal built-in server that serves a pre-encoded pod list
and an idle watch. The parent process builds a pod informer through
SharedInformerFactory over the real HTTP client, times list + decode +
index + handler delivery, and reports its resident memory. The last line of
output is ``BENCH_RESULT {json}``.

    .venv/bin/python hack/bench_informer.py [--pods 10000] [--server auto|localcluster|minimal]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

NAMESPACE = "bench"
GOAL_SYNC_SECONDS = 2.0
GOAL_RSS_MB = 150.0


def make_pod(i: int) -> dict[str, Any]:
    """A realistic TFJob worker pod, about 2 KB of JSON."""
    job = f"mnist-{i // 4}"
    rtype, index = ("worker", i % 4) if i % 4 else ("ps", 0)
    name = f"{job}-{rtype}-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {
                "group-name": "kubeflow.org",
                "job-name": job,
                "tf-job-name": job,
                "tf-replica-type": rtype,
                "tf-replica-index": str(index),
            },
            "annotations": {"scheduling.k8s.io/group-name": job},
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "name": job,
                    "uid": f"6f1c2a7e-{i // 4:04x}-4b1e-9a7d-3c2b1a0f9e8d",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "tensorflow",
                    "image": "gcr.io/kubeflow-ci/tf-mnist-with-summaries:1.0",
                    "command": ["python", "/var/tf_mnist/mnist_with_summaries.py"],
                    "args": ["--log_dir=/train/logs", "--learning_rate=0.01", "--batch_size=150"],
                    "ports": [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}],
                    "env": [
                        {
                            "name": "TF_CONFIG",
                            "value": json.dumps(
                                {"cluster": {}, "task": {"type": rtype, "index": index}}
                            ),
                        },
                        {
                            "name": "POD_NAME",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                        },
                    ],
                    "resources": {
                        "limits": {"cpu": "1", "memory": "1Gi"},
                        "requests": {"cpu": "500m", "memory": "512Mi"},
                    },
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "OnFailure",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 50}",
            "schedulerName": "default-scheduler",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": t,
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2019-06-01T10:00:00Z",
                }
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i % 50}.1",
            "podIP": f"10.244.{i // 250}.{i % 250}",
            "startTime": "2019-06-01T10:00:00Z",
            "qosClass": "Burstable",
            "containerStatuses": [
                {
                    "name": "tensorflow",
                    "state": {"running": {"startedAt": "2019-06-01T10:00:05Z"}},
                    "ready": True,
                    "restartCount": 0,
                    "image": "gcr.io/kubeflow-ci/tf-mnist-with-summaries:1.0",
                    "imageID": "docker-pullable://gcr.io/kubeflow-ci/tf-mnist-with-summaries@sha256:5c3181",
                    "containerID": f"docker://{i:064x}",
                }
            ],
        },
    }


# ---- server side (child process) ------------------------------------------------------


def serve_localcluster(n: int) -> str:
    from localcluster.controlplane.emulated import APIServer

    server = APIServer(host="127.0.0.1", port=0)
    server.start()
    reg = server.registry
    # The pods' owner TFJobs do not exist here; keep the emulator's garbage
    # collector (started with the server) from deleting them as orphans.
    reg.gc.stop()
    with contextlib.suppress(Exception):  # the namespace may exist already
        reg.create(("", "v1", "namespaces"), None, {"metadata": {"name": NAMESPACE}})
    gvr = ("", "v1", "pods")
    for i in range(n):
        pod = make_pod(i)
        created = reg.create(gvr, NAMESPACE, pod)
        # Creation resets a pod's status, as a real API server does; give it the
        # status a kubelet would report for a running pod.
        created["status"] = pod["status"]
        reg.update(gvr, NAMESPACE, created["metadata"]["name"], created, subresource="status")
    return server.url


def serve_minimal(n: int) -> str:
    items = []
    for i in range(n):
        pod = make_pod(i)
        pod["metadata"].update(
            uid=f"uid-{i}", resourceVersion=str(i + 1), creationTimestamp="2019-06-01T10:00:00Z"
        )
        items.append(pod)
    body = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {"resourceVersion": str(n)},
            "items": items,
        },
        separators=(",", ":"),
    ).encode()
    del items

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            q = parse_qs(urlparse(self.path).query)
            if q.get("watch", [""])[0] in ("true", "1"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                timeout = float(q.get("timeoutSeconds", ["600"])[0])
                threading.Event().wait(timeout)  # an idle watch
                self.wfile.write(b"0\r\n\r\n")
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def child_main(n: int, backend: str) -> None:
    used = backend
    if backend in ("auto", "localcluster"):
        try:
            url = serve_localcluster(n)
            used = "localcluster"
        except Exception as exc:  # noqa: BLE001
            if backend == "localcluster":
                raise
            print(
                f"localcluster API server unavailable ({exc!r}); using the minimal server",
                file=sys.stderr,
            )
            url = serve_minimal(n)
            used = "minimal"
    else:
        url = serve_minimal(n)
    print(f"READY {used} {url}", flush=True)
    sys.stdin.read()  # until the parent closes our stdin


# ---- informer side (parent process) -------------------------------------------------


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 1e6


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # Linux: KiB


def run_bench(n: int, backend: str) -> dict[str, Any]:
    start_child = time.monotonic()
    child = subprocess.Popen(
        [
            sys.executable,
            os.path.abspath(__file__),
            "--serve",
            "--pods",
            str(n),
            "--server",
            backend,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    try:
        line = child.stdout.readline().split()
        if not line or line[0] != "READY":
            raise SystemExit(f"server did not start: {line}")
        used, url = line[1], line[2]
        populate_s = time.monotonic() - start_child
        return measure(n, url, used, populate_s)
    finally:
        child.stdin.close()
        child.terminate()
        child.wait(10)


def measure(n: int, url: str, used: str, populate_s: float) -> dict[str, Any]:
    rss_start = rss_mb()
    from tf_operator.k8s.cache import ResourceEventHandlerFuncs
    from tf_operator.k8s.client import PODS, load_kube_client
    from tf_operator.k8s.informers import SharedInformerFactory

    rss_imports = rss_mb()
    kc = load_kube_client(master=url, request_timeout=120)
    factory = SharedInformerFactory(kc, resync_period=0, namespace=NAMESPACE)
    informer = factory.pods()
    added = 0
    all_added = threading.Event()

    def on_add(obj: Any) -> None:
        nonlocal added
        added += 1
        if added == n:
            all_added.set()

    informer.add_event_handler(ResourceEventHandlerFuncs(add=on_add))
    stop = threading.Event()
    t0 = time.monotonic()
    cpu0 = time.process_time()
    factory.start(stop)
    synced = factory.wait_for_cache_sync(stop, timeout=120)
    sync_s = time.monotonic() - t0
    sync_cpu_s = time.process_time() - cpu0
    handlers_ok = all_added.wait(120)
    handlers_s = time.monotonic() - t0
    rss_synced = rss_mb()
    peak_synced = peak_rss_mb()
    cached = len(informer.get_indexer().list_keys())
    by_ns = len(informer.get_indexer().by_index("namespace", NAMESPACE))

    # Where the time goes: one bare list (HTTP + decode) for comparison.
    from tf_operator.k8s.client import Timeout
    from tf_operator.k8s.client.rest import decode

    t1 = time.monotonic()
    _, _, data = kc.transport.http.send(
        "GET", PODS.path(NAMESPACE), {"resourceVersion": "0"}, timeout=Timeout(read=120.0)
    )
    t2 = time.monotonic()
    raw_items = len(decode(data)["items"])
    t3 = time.monotonic()
    http_s, decode_s, body_mb = t2 - t1, t3 - t2, len(data) / 1e6
    del data
    stop.set()
    factory.join(5)
    kc.close()
    return {
        "pods": n,
        "server": used,
        "server_populate_s": round(populate_s, 2),
        "synced": all(synced.values()),
        "cached": cached,
        "indexed_in_namespace": by_ns,
        "list_and_sync_s": round(sync_s, 3),
        "list_and_sync_cpu_s": round(sync_cpu_s, 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "all_add_handlers_s": round(handlers_s, 3) if handlers_ok else None,
        "bare_list_http_s": round(http_s, 3),
        "bare_list_decode_s": round(decode_s, 3),
        "list_body_mb": round(body_mb, 1),
        "bare_list_items": raw_items,
        "rss_start_mb": round(rss_start, 1),
        "rss_after_imports_mb": round(rss_imports, 1),
        "rss_after_sync_mb": round(rss_synced, 1),
        "peak_rss_mb": round(peak_synced, 1),
        "goal_sync_s": GOAL_SYNC_SECONDS,
        "goal_rss_mb": GOAL_RSS_MB,
        "pass": bool(
            all(synced.values())
            and cached == n
            and sync_s < GOAL_SYNC_SECONDS
            and peak_synced < GOAL_RSS_MB
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--server", choices=("auto", "localcluster", "minimal"), default="auto")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        child_main(args.pods, args.server)
        return 0
    result = run_bench(args.pods, args.server)
    print(
        f"server: {result['server']} ({result['pods']} pods, populated in {result['server_populate_s']} s)"
    )
    print(
        f"list + decode + index + has_synced: {result['list_and_sync_s']} s wall, "
        f"{result['list_and_sync_cpu_s']} s CPU in this process (goal < {GOAL_SYNC_SECONDS} s); "
        f"all add handlers done: {result['all_add_handlers_s']} s"
    )
    print(f"machine load average (1 min): {result['load_average_1m']}")
    print(
        f"for comparison, one bare list: HTTP {result['bare_list_http_s']} s "
        f"({result['list_body_mb']} MB body), JSON decode {result['bare_list_decode_s']} s"
    )
    print(
        f"cached objects: {result['cached']}; in namespace index: {result['indexed_in_namespace']}"
    )
    print(
        f"RSS: start {result['rss_start_mb']} MB, after imports {result['rss_after_imports_mb']} MB, "
        f"after sync {result['rss_after_sync_mb']} MB, peak {result['peak_rss_mb']} MB "
        f"(goal < {GOAL_RSS_MB} MB)"
    )
    print("BENCH_RESULT " + json.dumps(result, sort_keys=True))
    if not (result["synced"] and result["cached"] == result["pods"]):
        return 1  # a broken measurement, not a slow one: make `make bench` fail
    return 0


if __name__ == "__main__":
    sys.exit(main())
