"""Benchmark the API server emulator: creates/s and gets/s with 50 open watches.

The server runs in its own process (so the load generator's GIL does not distort it). The
benchmark opens ``--watches`` watches on configmaps in the benchmark namespace (the worst case:
every create is fanned out to every watch), then drives simple ConfigMap creates and then gets
from ``--procs`` load processes with ``--threads`` keep-alive ``http.client`` connections each,
for ``--seconds`` per phase. It checks every watch saw every create. Then it takes the cost
of each layer of the request path per request (``benchkit.layers``: a local cluster in this
process, the bare client's 2,000 creates). It prints the figures and, as its last line,
``BENCH_RESULT {json}``.

Usage: ``python hack/bench_apiserver.py [--seconds 5] [--watches 50] [--procs 2] [--threads 4]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from typing import Any, cast

from benchkit.paths import ROOT

GOAL_WRITES_PER_S = 1500
GOAL_GETS_PER_S = 3000
NAMESPACE = "bench"
SERVER_CODE = """
import sys, threading
sys.setswitchinterval(float(sys.argv[2]))
from localcluster.controlplane.emulated import APIServer
server = APIServer(port=0, watch_history=int(sys.argv[1]))
server.start()
print(server.port, flush=True)
sys.stdin.read()
server.stop()
"""


def start_server(history: int, switch_interval: float) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_CODE, str(history), str(switch_interval)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


class Watchers:
    """Raw-socket watches drained by one selector thread, counting events per watch."""

    def __init__(self, port: int, count: int) -> None:
        self.counts = [0] * count
        self._sel = selectors.DefaultSelector()
        self._socks = []
        for i in range(count):
            s = socket.create_connection(("127.0.0.1", port))
            path = f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=true&resourceVersion=0"
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            s.setblocking(False)
            self._sel.register(s, selectors.EVENT_READ, i)
            self._socks.append(s)
        self._tail = [b""] * count
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            for key, _ in self._sel.select(0.2):
                try:
                    data = cast(socket.socket, key.fileobj).recv(1 << 20)
                except BlockingIOError:
                    continue
                if not data:
                    self._sel.unregister(key.fileobj)
                    continue
                i = key.data
                buf = self._tail[i] + data
                self.counts[i] += buf.count(b'"type":"ADDED"')
                self._tail[i] = buf[-20:]

    def wait_for(self, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if min(self.counts, default=n) >= n:
                return True
            time.sleep(0.05)
        return min(self.counts, default=n) >= n

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        for s in self._socks:
            s.close()


def _worker(
    port: int, phase: str, seconds: float, tag: str, names: list[str], out: list[Any]
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    ok = errors = 0
    latencies = []
    i = 0
    deadline = time.monotonic() + seconds
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        if phase == "create":
            body = json.dumps({"metadata": {"name": f"{tag}-{i}"}, "data": {"k": "v"}})
            conn.request("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", body, headers)
        else:
            conn.request(
                "GET",
                f"/api/v1/namespaces/{NAMESPACE}/configmaps/{names[i % len(names)]}",
                headers=headers,
            )
        resp = conn.getresponse()
        resp.read()
        latencies.append(time.perf_counter() - t0)
        if resp.status in (200, 201):
            ok += 1
        else:
            errors += 1
        i += 1
    conn.close()
    out.append((ok, errors, latencies))


def _load_process(
    port: int,
    phase: str,
    seconds: float,
    threads: int,
    proc_index: int,
    names: list[str],
    queue: mp.Queue[Any],
) -> None:
    out: list[Any] = []
    ts = [
        threading.Thread(
            target=_worker, args=(port, phase, seconds, f"p{proc_index}t{t}", names, out)
        )
        for t in range(threads)
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    queue.put(out)


def run_phase(
    port: int, phase: str, seconds: float, procs: int, threads: int, names: list[str]
) -> dict[str, Any]:
    queue: mp.Queue[Any] = mp.Queue()
    started = time.monotonic()
    ps = [
        mp.Process(target=_load_process, args=(port, phase, seconds, threads, p, names, queue))
        for p in range(procs)
    ]
    for p in ps:
        p.start()
    results = [r for _ in ps for r in queue.get()]
    for p in ps:
        p.join()
    elapsed = time.monotonic() - started
    ok = sum(r[0] for r in results)
    errs = sum(r[1] for r in results)
    lat = sorted(x for r in results for x in r[2])
    return {
        "requests": ok,
        "errors": errs,
        "seconds": round(seconds, 2),
        "wall_seconds": round(elapsed, 2),
        "per_s": round(ok / seconds, 1),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 2) if lat else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--watches", type=int, default=50)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--history", type=int, default=100000)
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=0.005,
        help="sys.setswitchinterval() in the server process (Python's default is 0.005)",
    )
    args = parser.parse_args()
    os.chdir(ROOT)
    server, port = start_server(args.history, args.switch_interval)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        conn.request(
            "POST",
            "/api/v1/namespaces",
            json.dumps({"metadata": {"name": NAMESPACE}}),
            {"Content-Type": "application/json"},
        )
        assert conn.getresponse().read() and True
        watchers = Watchers(port, args.watches)
        creates = run_phase(port, "create", args.seconds, args.procs, args.threads, [])
        delivered = watchers.wait_for(creates["requests"], timeout=60)
        conn.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps?limit=200")
        names = [i["metadata"]["name"] for i in json.loads(conn.getresponse().read())["items"]]
        gets = run_phase(port, "get", args.seconds, args.procs, args.threads, names)
        conn.request("GET", "/api/v1/namespaces?limit=1")
        conn.getresponse().read()
        watchers.close()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)
    print(
        f"server process: {args.watches} watches on configmaps/{NAMESPACE} (every create fans out to each)"
    )
    print(
        f"load: {args.procs} processes x {args.threads} keep-alive connections, {args.seconds}s per phase"
    )
    print(
        f"creates: {creates['per_s']}/s (p50 {creates['p50_ms']} ms, p99 {creates['p99_ms']} ms, errors {creates['errors']}); goal {GOAL_WRITES_PER_S}/s"
    )
    print(
        f"every watch received every create: {delivered} (min {min(watchers.counts, default=0)} of {creates['requests']})"
    )
    print(
        f"gets:    {gets['per_s']}/s (p50 {gets['p50_ms']} ms, p99 {gets['p99_ms']} ms, errors {gets['errors']}); goal {GOAL_GETS_PER_S}/s"
    )
    from benchkit import layers  # after the phases: it times the local cluster in this process

    per_layer = layers.run(200, 4, "localcluster")
    layers.print_table(per_layer)
    summary = {
        "layers": {
            key: per_layer[key]
            for key in (
                "process_cpu_us_per_request",
                "request_threads_us_per_request",
                "layers_us_per_request",
                "timer_overhead_us",
            )
        },
        "watches": args.watches,
        "switch_interval": args.switch_interval,
        "procs": args.procs,
        "threads": args.threads,
        "creates_per_s": creates["per_s"],
        "gets_per_s": gets["per_s"],
        "creates": creates,
        "gets": gets,
        "watch_delivery_complete": delivered,
        "goal_creates_per_s": GOAL_WRITES_PER_S,
        "goal_gets_per_s": GOAL_GETS_PER_S,
        "meets_goal": creates["per_s"] >= GOAL_WRITES_PER_S
        and gets["per_s"] >= GOAL_GETS_PER_S
        and delivered,
    }
    print("BENCH_RESULT " + json.dumps(summary, sort_keys=True))

    return 0


if __name__ == "__main__":
    sys.exit(main())
