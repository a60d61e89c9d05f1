"""PaddlePaddle's ``run_check`` across nodes that find each other only through the PaddleJob
environment.

It stands in for ``python -m paddle.distributed.launch run_check`` (v1.9's simple-cpu example)
where no Paddle is installed: standard library only, the same contract. Every node reads
``PADDLE_MASTER`` (``host:port`` of the master endpoint), ``PADDLE_NNODES`` and
``PADDLE_JOB_ID`` as Paddle's launcher does. The node whose own address is the endpoint's (the
operator gives it ``$(POD_IP_DUMMY):<port>``, its pod IP through the downward API) is the
launcher's master: it listens there and the other nodes connect (retrying while it starts),
each saying the job it belongs to; the master hands out ranks in order of arrival (its own
is 0), as the launcher's rendezvous does.

Then the check: an all-reduce of every node's rank (each prints ``allreduce <sum>``) and a few
steps of data-parallel SGD on a linear model, the gradients all-reduced every step; rank 0 prints
``step <n> loss <mse>`` and ``PaddlePaddle works well on <n> nodes.`` once the loss fell.
Peers talk over TCP with 4-byte big-endian length-prefixed JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import time

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


class Nodes:
    """The master's socket per node, or a node's one to the master; ``rank`` as handed out."""

    def __init__(self, endpoint: str, nnodes: int, job: str, timeout: float) -> None:
        host, port = endpoint.rsplit(":", 1)
        self.peers: list[socket.socket] = []
        # the operator gives the endpoint's pod its own IP (and no other pod POD_IP_DUMMY)
        if host == os.environ.get("POD_IP_DUMMY"):
            self.rank = 0
            with socket.create_server((host, int(port))) as server:
                server.settimeout(timeout)
                while len(self.peers) < nnodes - 1:
                    conn, _ = server.accept()
                    if recv(conn) != job:
                        raise SystemExit("a node of another job joined")
                    send(conn, len(self.peers) + 1)
                    self.peers.append(conn)
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                conn = socket.create_connection((host, int(port)), timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        send(conn, job)
        self.rank = int(recv(conn))  # type: ignore[call-overload]
        self.peers = [conn]

    def allreduce(self, vector: list[float]) -> list[float]:
        """The element-wise sum of every node's ``vector``, on every node."""
        if self.rank != 0:
            send(self.peers[0], vector)
            return [float(v) for v in recv(self.peers[0])]  # type: ignore[union-attr]
        total = list(vector)
        for peer in self.peers:
            total = [a + float(b) for a, b in zip(total, recv(peer), strict=True)]  # type: ignore[arg-type]
        for peer in self.peers:
            send(peer, total)
        return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for peers")
    args = parser.parse_args()
    endpoint, nnodes = os.environ["PADDLE_MASTER"], int(os.environ["PADDLE_NNODES"])
    job = os.environ["PADDLE_JOB_ID"]
    nodes = Nodes(endpoint, nnodes, job, args.timeout)
    print(f"node rank {nodes.rank} of {nnodes} in job {job}, master {endpoint}", flush=True)
    print(f"allreduce {nodes.allreduce([float(nodes.rank)])[0]:g}", flush=True)

    rng = random.Random(nodes.rank)
    data = [
        (x, 3.0 * x - 1.0 + rng.gauss(0, 0.05)) for x in (rng.uniform(-1, 1) for _ in range(100))
    ]
    w = b = 0.0
    losses = []
    for step in range(args.steps):
        gw = sum(2 * (w * x + b - y) * x for x, y in data)
        gb = sum(2 * (w * x + b - y) for x, y in data)
        sse = sum((w * x + b - y) ** 2 for x, y in data)
        gw, gb, sse, count = nodes.allreduce([gw, gb, sse, float(len(data))])
        w, b = w - 0.3 * gw / count, b - 0.3 * gb / count
        losses.append(sse / count)
        if nodes.rank == 0 and step % 10 == 0:
            print(f"step {step} loss {losses[-1]:.5f}", flush=True)
    if losses[-1] >= losses[0] / 10:
        return 1
    if nodes.rank == 0:
        print(f"PaddlePaddle works well on {nnodes} nodes.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
