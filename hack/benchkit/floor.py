"""The floor: a bare threaded client making only the requests a job lifecycle cannot avoid.

It watches TFJobs like the operator does, and for each new job one of ``--threads`` workers
sends, over its own keep-alive HTTP/1.1 connection, exactly: the job's pods and services
(per replica type, pods then services, as v0.5.3 orders them) and, in ``full`` mode, one
event per object created plus the first status write. In ``objects`` mode it sends only the
pods and services. In ``full`` mode it also holds a watch on pods and one on services (read,
not decoded), as any controller's informers would. No informers, no expectations, no retries beyond one reconnect: whatever
the operator takes beyond this is its own overhead.

Run by the harness as ``python -m benchkit.floor --server URL [--token T]``; it runs until
SIGTERM; an ``https`` server is verified with ``--ca-file``. Its User-Agent is ``tfop-floor`` so the API server counts its requests apart.
"""

from __future__ import annotations

import argparse
import http.client
import json
import queue
import signal
import ssl
import sys
import threading
from typing import Any
from urllib.parse import urlsplit

from benchkit.workload import NAMESPACE, creation_bodies, floor_status

USER_AGENT = "tfop-floor/1"
TFJOBS_PATH = f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/tfjobs"


class Connection:
    """One keep-alive connection; JSON in, ``(status, decoded body)`` out."""

    def __init__(self, server: str, token: str | None, ca_file: str | None = None) -> None:
        parts = urlsplit(server)
        self._https = parts.scheme == "https"
        self._ca_file = ca_file
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None and self._https:
            context = ssl.create_default_context(cafile=self._ca_file)
            self._conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=120, context=context
            )
        elif self._conn is None:
            self._conn = http.client.HTTPConnection(self._host, self._port, timeout=120)
        return self._conn

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            conn = self._connect()
            try:
                conn.request(method, path, body=data, headers=headers)
                reply = conn.getresponse()
                payload = reply.read()
                return reply.status, json.loads(payload) if payload else {}
            except (OSError, http.client.HTTPException):
                conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def stream(self, path: str) -> http.client.HTTPResponse:
        conn = self._connect()
        conn.request("GET", path, headers=self._headers)
        return conn.getresponse()


def handle(conn: Connection, job: dict[str, Any], mode: str) -> None:
    """Every request of ``mode`` for one job, one after another."""
    base = f"/api/v1/namespaces/{NAMESPACE}"
    for plural, body in creation_bodies(job, events=mode == "full"):
        conn.request("POST", f"{base}/{plural}", body)
    if mode == "full":
        conn.request("PUT", f"{TFJOBS_PATH}/{job['metadata']['name']}/status", floor_status(job))


def watch_jobs(conn: Connection, jobs: queue.Queue[Any]) -> None:
    """List, then watch TFJobs; every job seen for the first time goes to ``jobs``."""
    seen: set[str | None] = set()
    status, listing = conn.request("GET", TFJOBS_PATH)
    if status != 200:
        raise SystemExit(f"listing TFJobs failed: {status} {listing}")
    for item in listing.get("items") or []:
        seen.add(item["metadata"]["uid"])
        jobs.put(item)
    rv = listing["metadata"]["resourceVersion"]
    reply = conn.stream(f"{TFJOBS_PATH}?watch=true&resourceVersion={rv}")
    while True:
        line = reply.readline()
        if not line:
            raise SystemExit("the TFJob watch ended")
        event = json.loads(line)
        obj = event.get("object") or {}
        uid = (obj.get("metadata") or {}).get("uid")
        if event.get("type") == "ADDED" and uid not in seen:
            seen.add(uid)
            jobs.put(obj)


def drain(conn: Connection, path: str) -> None:
    """Hold a watch and read what it sends without decoding it: the API server pays for
    every event it serialises to a controller's pod and service informers, so the floor
    makes it pay the same."""
    status, listing = conn.request("GET", path)
    reply = conn.stream(
        f"{path}?watch=true&resourceVersion={listing['metadata']['resourceVersion']}"
    )
    while reply.read1(65536):
        pass


def worker(
    server: str, token: str | None, ca_file: str | None, jobs: queue.Queue[Any], mode: str
) -> None:
    conn = Connection(server, token, ca_file)
    while True:
        handle(conn, jobs.get(), mode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", default=None)
    parser.add_argument("--ca-file", default=None, help="verifies an https server")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--mode", choices=("full", "objects"), default="full")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    jobs: queue.Queue[Any] = queue.Queue()
    for i in range(args.threads):
        threading.Thread(
            target=worker,
            args=(args.server, args.token, args.ca_file, jobs, args.mode),
            name=f"floor-{i}",
            daemon=True,
        ).start()
    if args.mode == "full":
        for resource in ("pods", "services"):
            threading.Thread(
                target=drain,
                args=(
                    Connection(args.server, args.token, args.ca_file),
                    f"/api/v1/namespaces/{NAMESPACE}/{resource}",
                ),
                name=f"watch-{resource}",
                daemon=True,
            ).start()
    watch_jobs(Connection(args.server, args.token, args.ca_file), jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
