"""training-operator v1.9's ``examples/pytorch/smoke-dist`` without PyTorch: send/recv between
the Master and every worker, the peers found only through the environment the operator sets.

v1.9's ``dist_sendrecv.py`` calls ``torch.distributed.init_process_group("gloo")``, which
reads ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK``; then rank 0 sends a random
2x2 tensor to each other rank, which squares it element-wise and sends it back. This program
does the same over TCP with the standard library (4-byte big-endian length-prefixed JSON):
rank 0 listens on ``MASTER_ADDR:MASTER_PORT`` and serves every other rank once; each other
rank connects (retrying while the Master starts: replicas start in any order), receives the
tensor, answers with its square. Rank 0 checks every answer and exits 0 once all
``WORLD_SIZE - 1`` ranks answered; every rank exits non-zero on a wrong answer or a timeout.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import socket
import struct
import time

_HEADER = struct.Struct(">I")

Tensor = list[list[float]]


def send(sock: socket.socket, message: object) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock: socket.socket) -> object:
    header = _recv_exactly(sock, _HEADER.size)
    return json.loads(_recv_exactly(sock, _HEADER.unpack(header)[0]))


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionError("peer closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def square(tensor: Tensor) -> Tensor:
    return [[x * x for x in row] for row in tensor]


def listen_address(host: str) -> str:
    """The Master's own address when it resolves to a loopback one (the local cluster gives
    each pod its own 127.x address), else every interface."""
    try:
        address = socket.gethostbyname(host)
    except OSError:
        return ""
    return address if address.startswith("127.") else ""


def run_master(addr: str, port: int, world_size: int, timeout: float) -> None:
    tensor = [[random.uniform(-1, 1) for _ in range(2)] for _ in range(2)]
    with socket.create_server((listen_address(addr), port)) as server:
        server.settimeout(timeout)
        for _ in range(1, world_size):
            conn, _ = server.accept()
            with conn:
                rank = recv(conn)
                send(conn, tensor)
                result = recv(conn)
                if result != square(tensor):
                    raise SystemExit(f"wrong result from worker {rank}: {result}")
                logging.info("Result from worker %s : %s", rank, result)


def run_worker(addr: str, port: int, rank: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    with conn:
        send(conn, rank)
        tensor = recv(conn)
        assert isinstance(tensor, list)
        send(conn, square(tensor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for peers")
    args = parser.parse_args()
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    world_size, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    for name in ("MASTER_PORT", "MASTER_ADDR", "WORLD_SIZE", "RANK"):
        logging.info("%s: %s", name, os.environ[name])
    if rank == 0:
        run_master(addr, port, world_size, args.timeout)
    else:
        run_worker(addr, port, rank, args.timeout)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    main()
