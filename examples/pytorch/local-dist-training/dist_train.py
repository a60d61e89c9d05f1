"""Data-parallel training that finds its peers only through the PyTorchJob environment.

It stands in for ``torch.distributed`` with the gloo backend where no PyTorch is installed:
standard library only, the same contract. Every replica reads ``MASTER_ADDR``, ``MASTER_PORT``,
``WORLD_SIZE`` and ``RANK`` as ``init_process_group("gloo")`` does; rank 0 (the Master) listens
on ``MASTER_ADDR:MASTER_PORT`` and every other rank connects to it (retrying while the Master
starts: replicas start in any order). That is the rendezvous; nothing else is configured.

The model is a linear regression on synthetic data, each rank holding its own shard. Every
step each rank computes the mean-squared-error gradient on a minibatch of its shard, and the
gradients are all-reduced (averaged over the ranks: the workers send theirs to rank 0, which
sums them with its own and sends the average back, a reduce then a broadcast); every rank
applies the same averaged gradient, so the replicas' weights stay equal, as with
``DistributedDataParallel``. Rank 0 prints ``step <n> loss <mse>`` on held-out data while it
trains and exits 0 once the loss is below ``--target-loss`` or the steps are done; the job
succeeds when the Master does. Peers talk over TCP with 4-byte big-endian length-prefixed JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import sys
import time

FEATURES = 4
TRUE_WEIGHTS = [2.0, -3.0, 0.5, 1.5]
TRUE_BIAS = 0.7
_HEADER = struct.Struct(">I")

Vector = list[float]


def send(sock: socket.socket, message: object) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock: socket.socket) -> object:
    size = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))[0]
    return json.loads(_recv_exactly(sock, size))


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionError("peer closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def shard(rank: int, size: int) -> list[tuple[Vector, float]]:
    """This rank's training data: ``size`` noisy samples of the true model."""
    rng = random.Random(rank)
    data = []
    for _ in range(size):
        x = [rng.uniform(-1, 1) for _ in range(FEATURES)]
        y = sum(w * v for w, v in zip(TRUE_WEIGHTS, x, strict=True)) + TRUE_BIAS
        data.append((x, y + rng.gauss(0, 0.05)))
    return data


def predict(params: Vector, x: Vector) -> float:
    return sum(w * v for w, v in zip(params[:FEATURES], x, strict=True)) + params[FEATURES]


def gradient(params: Vector, batch: list[tuple[Vector, float]]) -> Vector:
    """d(mse)/d(params) over ``batch`` (weights, then bias)."""
    grad = [0.0] * (FEATURES + 1)
    for x, y in batch:
        error = predict(params, x) - y
        for i, v in enumerate(x):
            grad[i] += 2 * error * v / len(batch)
        grad[FEATURES] += 2 * error / len(batch)
    return grad


def mse(params: Vector, data: list[tuple[Vector, float]]) -> float:
    return sum((predict(params, x) - y) ** 2 for x, y in data) / len(data)


class AllReduce:
    """Average a vector over every rank: rank 0 reduces and broadcasts (a star all-reduce)."""

    def __init__(self, rank: int, world_size: int, peers: list[socket.socket]) -> None:
        self.rank, self.world_size, self.peers = rank, world_size, peers

    def average(self, vector: Vector) -> Vector:
        if self.world_size == 1:
            return vector
        if self.rank != 0:
            send(self.peers[0], vector)
            return _floats(recv(self.peers[0]))
        total = list(vector)
        for peer in self.peers:
            for i, v in enumerate(_floats(recv(peer))):
                total[i] += v
        mean = [v / self.world_size for v in total]
        for peer in self.peers:
            send(peer, mean)
        return mean


def _floats(message: object) -> Vector:
    if not isinstance(message, list):
        raise ValueError(f"expected a vector, got {message!r}")
    return [float(v) for v in message]


def rendezvous(addr: str, port: int, rank: int, world_size: int, timeout: float) -> AllReduce:
    """Rank 0 accepts every other rank on ``addr:port``; the others connect to it."""
    if rank == 0:
        host = socket.gethostbyname(addr)
        # the local cluster gives each pod its own 127.x address: listen on ours only
        with socket.create_server((host if host.startswith("127.") else "", port)) as server:
            server.settimeout(timeout)
            by_rank = {}
            while len(by_rank) < world_size - 1:
                conn, _ = server.accept()
                by_rank[int(str(recv(conn)))] = conn
        print(f"rendezvous: {world_size} ranks at {addr}:{port}", flush=True)
        return AllReduce(rank, world_size, [by_rank[r] for r in sorted(by_rank)])
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
    return AllReduce(rank, world_size, [conn])


def train(args: argparse.Namespace, reduce: AllReduce) -> float:
    data = shard(reduce.rank, args.samples)
    held_out = shard(10_000, 200)
    rng = random.Random(1000 + reduce.rank)
    params = [0.0] * (FEATURES + 1)
    loss = mse(params, held_out)
    for step in range(1, args.steps + 1):
        grad = reduce.average(gradient(params, rng.sample(data, args.batch)))
        params = [p - args.learning_rate * g for p, g in zip(params, grad, strict=True)]
        if reduce.rank == 0 and (step % args.log_every == 0 or step == args.steps):
            loss = mse(params, held_out)
            print(f"step {step} loss {loss:.6f}", flush=True)
        if args.step_delay:
            time.sleep(args.step_delay)
    return loss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds to pause per step")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for peers")
    args = parser.parse_args(argv)
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    world_size, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    print(f"rank {rank} of {world_size}, master {addr}:{port}", flush=True)
    reduce = rendezvous(addr, port, rank, world_size, args.timeout)
    loss = train(args, reduce)
    if rank == 0:
        print(f"done: loss {loss:.6f} after {args.steps} steps on {world_size} ranks", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
