"""The bare client's creates: every pod and service of the TFJobs in a cluster, and nothing else.

The floor's ``objects`` mode without its watch: it lists the TFJobs of ``default`` once,
builds the bodies the floor sends for each (``workload.creation_bodies(job, events=False)``:
1 PS + 4 workers give 5 pods and 5 services), prints ``ready <requests>`` and waits for a
line on stdin, then sends them from ``--threads`` keep-alive connections (the floor's
``Connection``) and prints one JSON line: ``{"wall_s", "requests", "codes"}``. Building the
bodies happens before ``ready``, so the time between the go and the answer is the cluster's
throughput for these creates, as nearly as a Python client can show it.

Run by the benchmark against any local cluster reachable over HTTP (this tree's or an older
one's): ``python -m benchkit.creates --server URL [--token T] [--threads 4]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import Counter
from typing import Any

from benchkit.floor import TFJOBS_PATH, Connection
from benchkit.workload import NAMESPACE, creation_bodies

Request = tuple[str, dict[str, Any]]


def bodies_for(jobs: list[dict[str, Any]]) -> list[Request]:
    """``(collection path, body)`` of every pod and service of ``jobs``, job by job."""
    base = f"/api/v1/namespaces/{NAMESPACE}"
    return [
        (f"{base}/{plural}", body)
        for job in jobs
        for plural, body in creation_bodies(job, events=False)
    ]


def send_all(server: str, token: str | None, requests: list[Request], threads: int) -> Counter[int]:
    """POST ``requests`` spread round-robin over ``threads`` connections; status code counts."""
    codes: Counter[int] = Counter()
    lock = threading.Lock()

    def run(share: list[Request]) -> None:
        conn = Connection(server, token)
        mine: Counter[int] = Counter()
        for path, body in share:
            status, _ = conn.request("POST", path, body)
            mine[status] += 1
        with lock:
            codes.update(mine)

    workers = [
        threading.Thread(target=run, args=(requests[i::threads],), name=f"creates-{i}")
        for i in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return codes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", default=None)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args(argv)
    status, listing = Connection(args.server, args.token).request("GET", TFJOBS_PATH)
    if status != 200:
        raise SystemExit(f"listing TFJobs failed: {status} {listing}")
    requests = bodies_for(listing.get("items") or [])
    print(f"ready {len(requests)}", flush=True)
    sys.stdin.readline()
    began = time.monotonic()
    codes = send_all(args.server, args.token, requests, args.threads)
    wall = time.monotonic() - began
    print(json.dumps({"wall_s": round(wall, 4), "requests": len(requests), "codes": codes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
