"""Distributed gradient boosting that finds its peers only through the XGBoostJob environment.

It stands in for XGBoost's rabit (v1.9's smoke-dist example) where no XGBoost is installed:
standard library only, the same contract. Every replica reads ``MASTER_ADDR``, ``MASTER_PORT``,
``WORLD_SIZE`` and ``RANK`` as v1.9's example hands them to rabit (``DMLC_TRACKER_URI``,
``DMLC_TRACKER_PORT``, ``DMLC_NUM_WORKER``, ``DMLC_TASK_ID``); rank 0 (the Master) is the
tracker, listening on ``MASTER_ADDR:MASTER_PORT``, and every worker connects to it (retrying
while it starts). The Master checks ``WORKER_ADDRS``/``WORKER_PORT`` name one address per
worker.

Each rank holds its own shard of a one-feature regression problem. Every round each rank sums
its residuals and counts per histogram bin; the histograms are all-reduced (summed at the
tracker and sent back, as rabit's allreduce), every rank picks the same best split (largest
variance reduction) and adds that stump, scaled by the learning rate, to its predictions. The
Master prints ``round <n> rmse <value>`` (the RMSE over every shard, all-reduced too) and exits
0 once the rounds are done and the RMSE fell. Peers talk over TCP with 4-byte big-endian
length-prefixed JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import time

BINS = 16
_HEADER = struct.Struct(">I")


def send(sock: socket.socket, message: object) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock: socket.socket) -> object:
    def exactly(size: int) -> bytes:
        chunks = b""
        while len(chunks) < size:
            chunk = sock.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("peer closed the connection")
            chunks += chunk
        return chunks

    return json.loads(exactly(_HEADER.unpack(exactly(_HEADER.size))[0]))


class Tracker:
    """The star every rank talks through: rank 0 holds a socket per worker, a worker one."""

    def __init__(self, addr: str, port: int, rank: int, world: int, timeout: float) -> None:
        self.rank, self.peers = rank, []
        if rank == 0:
            host = socket.gethostbyname(addr)
            with socket.create_server((host if host.startswith("127.") else "", port)) as server:
                server.settimeout(timeout)
                joined = {}
                while len(joined) < world - 1:
                    conn, _ = server.accept()
                    joined[int(recv(conn))] = conn  # type: ignore[arg-type]
            if sorted(joined) != list(range(1, world)):
                raise SystemExit(f"unexpected ranks {sorted(joined)}")
            self.peers = [joined[r] for r in sorted(joined)]
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                conn = socket.create_connection((addr, port), timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        send(conn, rank)
        self.peers = [conn]

    def allreduce(self, vector: list[float]) -> list[float]:
        """The element-wise sum of every rank's ``vector``, on every rank."""
        if self.rank != 0:
            send(self.peers[0], vector)
            return [float(v) for v in recv(self.peers[0])]  # type: ignore[union-attr]
        total = list(vector)
        for peer in self.peers:
            total = [a + float(b) for a, b in zip(total, recv(peer), strict=True)]  # type: ignore[arg-type]
        for peer in self.peers:
            send(peer, total)
        return total


def target(x: float) -> float:
    return 3.0 if x < 0.3 else (-1.0 if x < 0.7 else 2.0)


def boost(tracker: Tracker, rank: int, rounds: int, rate: float) -> list[float]:
    rng = random.Random(rank)
    xs = [rng.random() for _ in range(200)]
    ys = [target(x) + rng.gauss(0, 0.1) for x in xs]
    preds = [0.0] * len(xs)
    bins = [min(int(x * BINS), BINS - 1) for x in xs]
    history = []
    for r in range(rounds):
        residual = [y - p for y, p in zip(ys, preds, strict=True)]
        sums, counts = [0.0] * BINS, [0.0] * BINS
        for b, g in zip(bins, residual, strict=True):
            sums[b] += g
            counts[b] += 1
        total = tracker.allreduce(sums + counts + [sum(g * g for g in residual)])
        sums, counts, sse = total[:BINS], total[BINS : 2 * BINS], total[-1]
        history.append((sse / sum(counts)) ** 0.5)
        if rank == 0:
            print(f"round {r} rmse {history[-1]:.4f}", flush=True)
        best = max(
            range(1, BINS),
            key=lambda s: (
                sum(sums[:s]) ** 2 / max(sum(counts[:s]), 1)
                + sum(sums[s:]) ** 2 / max(sum(counts[s:]), 1)
            ),
        )
        left = sum(sums[:best]) / max(sum(counts[:best]), 1)
        right = sum(sums[best:]) / max(sum(counts[best:]), 1)
        preds = [p + rate * (left if b < best else right) for p, b in zip(preds, bins, strict=True)]
    return history


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for peers")
    args = parser.parse_args()
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    if rank == 0:
        workers = [a for a in os.environ.get("WORKER_ADDRS", "").split(",") if a]
        print(f"tracker: {world} ranks at {addr}:{port}; workers {workers}", flush=True)
        if len(workers) != world - 1 or (workers and not os.environ.get("WORKER_PORT")):
            raise SystemExit("WORKER_ADDRS does not name every worker")
    tracker = Tracker(addr, port, rank, world, args.timeout)
    history = boost(tracker, rank, args.rounds, args.learning_rate)
    if rank == 0:
        print(f"rmse {history[0]:.4f} -> {history[-1]:.4f}", flush=True)
        return 0 if history[-1] < history[0] / 2 else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
