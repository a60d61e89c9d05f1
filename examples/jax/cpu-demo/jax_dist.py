"""A multi-process SPMD computation that finds its peers only through the JAXJob environment.

It stands in for v1.9's cpu-demo ``train.py`` (``jax.distributed.initialize`` with the gloo CPU
collectives) where no JAX is installed: standard library only, the same contract. Every process
reads ``COORDINATOR_ADDRESS``, ``COORDINATOR_PORT``, ``NUM_PROCESSES`` and ``PROCESS_ID`` as
``jax.distributed.initialize`` does; process 0 is the coordinator, listening on
``COORDINATOR_ADDRESS:COORDINATOR_PORT``, and every other process connects to it (retrying while
it starts).

First v1.9's demo: ``psum`` of a one on every process, which every process prints
(``psum <n>``: the number of processes). Then a few steps of power iteration on a fixed
symmetric matrix whose rows are sharded over the processes: each computes its rows of ``A @ v``,
the pieces are all-gathered (in process order, at the coordinator) so every process holds the
whole vector, which is normalised. Process 0 prints ``step <n> eigenvalue <estimate>`` and
every process exits 0 once the estimate is within 1e-6 of the largest eigenvalue. Peers talk
over TCP with 4-byte big-endian length-prefixed JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
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


class Processes:
    """The coordinator's socket per process (process 0), or a process's one to it."""

    def __init__(self, addr: str, port: int, pid: int, count: int, timeout: float) -> None:
        self.pid, self.peers = pid, []
        if pid == 0:
            host = socket.gethostbyname(addr)
            with socket.create_server((host if host.startswith("127.") else "", port)) as server:
                server.settimeout(timeout)
                joined = {}
                while len(joined) < count - 1:
                    conn, _ = server.accept()
                    joined[int(recv(conn))] = conn  # type: ignore[arg-type]
            if sorted(joined) != list(range(1, count)):
                raise SystemExit(f"unexpected process ids {sorted(joined)}")
            self.peers = [joined[p] for p in sorted(joined)]
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
        send(conn, pid)
        self.peers = [conn]

    def all_gather(self, piece: list[float]) -> list[float]:
        """Every process's ``piece``, concatenated in process order, on every process."""
        if self.pid != 0:
            send(self.peers[0], piece)
            return [float(v) for v in recv(self.peers[0])]  # type: ignore[union-attr]
        whole = list(piece)
        for peer in self.peers:
            whole += [float(v) for v in recv(peer)]  # type: ignore[union-attr]
        for peer in self.peers:
            send(peer, whole)
        return whole

    def psum(self, value: float) -> float:
        return sum(self.all_gather([value]))


def matrix(size: int) -> list[list[float]]:
    """A symmetric tridiagonal matrix (2 on the diagonal, -1 beside it)."""
    return [
        [2.0 if i == j else (-1.0 if abs(i - j) == 1 else 0.0) for j in range(size)]
        for i in range(size)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-process", type=int, default=4)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for peers")
    args = parser.parse_args()
    pid, count = int(os.environ["PROCESS_ID"]), int(os.environ["NUM_PROCESSES"])
    addr, port = os.environ["COORDINATOR_ADDRESS"], int(os.environ["COORDINATOR_PORT"])
    procs = Processes(addr, port, pid, count, args.timeout)
    print(f"process {pid}/{count - 1} initialized, coordinator {addr}:{port}", flush=True)
    print(f"psum {procs.psum(1.0):g}", flush=True)

    size = args.rows_per_process * count
    mine = matrix(size)[pid * args.rows_per_process : (pid + 1) * args.rows_per_process]
    vector = [1.0 + 0.1 * i for i in range(size)]
    exact = 2 - 2 * math.cos(size * math.pi / (size + 1))  # the largest eigenvalue
    estimate = 0.0
    for step in range(args.steps):
        product = procs.all_gather(
            [sum(a * b for a, b in zip(row, vector, strict=True)) for row in mine]
        )
        estimate = sum(a * b for a, b in zip(product, vector, strict=True))
        norm = sum(v * v for v in product) ** 0.5
        vector = [v / norm for v in product]
        if pid == 0 and step % 50 == 0:
            print(f"step {step} eigenvalue {estimate:.6f}", flush=True)
        if abs(estimate - exact) < 1e-6:
            break
    if pid == 0:
        print(f"eigenvalue {estimate:.6f} (exact {exact:.6f}) after {step + 1} steps", flush=True)
    return 0 if abs(estimate - exact) < 1e-6 else 1


if __name__ == "__main__":
    raise SystemExit(main())
