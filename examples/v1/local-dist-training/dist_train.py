"""A tiny parameter-server training job that finds its peers through ``TF_CONFIG``.

It stands in for distributed TensorFlow where no TensorFlow is installed: standard library only.
The model is a linear regression on synthetic data. Roles come from ``TF_CONFIG`` exactly as the
operator writes it:

* ``ps`` tasks hold a shard of the weights (weight ``i`` lives on ``ps[i % len(ps)]``), apply
  the gradients pushed to them with plain SGD, and exit 0 when told to stop.
* ``worker`` tasks wait until the chief has initialised the model, then pull the weights, compute the mean-squared-error gradient on a minibatch of
  their own data and push it back, for ``--steps`` steps, then report done to ``ps[0]``.
* the chief (``chief``/``master`` task, else worker 0, which then also trains) initialises the
  model (letting the workers start), evaluates the shared model on held-out data, prints ``step <global step> loss <mse>`` lines, and once every
  worker reported done tells each PS to stop and exits 0.

Peers talk over TCP with 4-byte big-endian length-prefixed JSON messages. Peers start in any
order, so every connection is retried (with fresh DNS resolution) until ``--connect-timeout``.
A PS listens on the address its own TF_CONFIG host name resolves to when that is a loopback
address (the local cluster gives every pod its own 127.x address), else on all interfaces.

``--crash-once-marker PATH`` makes worker ``--crash-index`` exit with ``--crash-exit-code`` after
a few steps the first time it runs (it creates PATH first), to exercise the ExitCode restart
policy: the operator recreates the pod and the second run trains normally.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

FEATURES = 4
TRUE_WEIGHTS = [2.0, -3.0, 0.5, 1.5]
TRUE_BIAS = 0.7
NOISE = 0.05
_HEADER = struct.Struct(">I")
_MAX_MESSAGE = 16 * 1024 * 1024


# ---------------------------------------------------------------- TF_CONFIG and roles


@dataclass
class Task:
    """This process's place in the cluster."""

    cluster: dict[str, list[str]]
    type: str
    index: int

    @property
    def ps(self) -> list[str]:
        return self.cluster.get("ps", [])

    @property
    def workers(self) -> list[str]:
        return self.cluster.get("worker", [])

    @property
    def chief_type(self) -> str:
        for kind in ("chief", "master"):
            if self.cluster.get(kind):
                return kind
        return "worker"

    @property
    def is_chief(self) -> bool:
        return self.type == self.chief_type and self.index == 0

    @property
    def own_address(self) -> str:
        return self.cluster[self.type][self.index]


def parse_tf_config(text: str) -> Task:
    """Read the operator's TF_CONFIG JSON."""
    config = json.loads(text)
    task = config.get("task") or {}
    return Task(
        cluster={k: list(v) for k, v in (config.get("cluster") or {}).items()},
        type=str(task.get("type", "")),
        index=int(task.get("index", 0)),
    )


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


# ---------------------------------------------------------------- wire protocol


def send_message(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            return None
        chunks.extend(chunk)
    return bytes(chunks)


def recv_message(sock: socket.socket) -> dict | None:
    """The next message, or None when the peer closed the connection."""
    header = _recv_exact(sock, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_MESSAGE:
        raise ValueError(f"message of {size} bytes is too large")
    body = _recv_exact(sock, size)
    return None if body is None else json.loads(body)


def connect(address: str, timeout: float) -> socket.socket:
    """Connect to ``host:port``, retrying (and re-resolving) until ``timeout`` seconds pass."""
    host, port = split_address(address)
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as err:
            if time.monotonic() + delay > deadline:
                raise ConnectionError(f"cannot reach {address}: {err}") from err
            time.sleep(delay)  # waiting for a peer process to come up, not for a test
            delay = min(delay * 2, 1.0)


class Peer:
    """A request/reply connection to one PS, reconnecting once if the connection broke."""

    def __init__(self, address: str, timeout: float) -> None:
        self.address = address
        self._timeout = timeout
        self._sock: socket.socket | None = None

    def call(self, message: dict) -> dict:
        for attempt in (1, 2):
            try:
                if self._sock is None:
                    self._sock = connect(self.address, self._timeout)
                send_message(self._sock, message)
                reply = recv_message(self._sock)
                if reply is None:
                    raise ConnectionError(f"{self.address} closed the connection")
                return reply
            except (ConnectionError, OSError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


# ---------------------------------------------------------------- model and data


def make_dataset(seed: int, size: int) -> list[tuple[list[float], float]]:
    """Synthetic samples of ``y = x . TRUE_WEIGHTS + TRUE_BIAS + noise``."""
    rng = random.Random(seed)
    samples = []
    for _ in range(size):
        x = [rng.uniform(-1, 1) for _ in range(FEATURES)]
        y = sum(w * v for w, v in zip(TRUE_WEIGHTS, x, strict=True)) + TRUE_BIAS
        samples.append((x, y + rng.gauss(0, NOISE)))
    return samples


def predict(params: list[float], x: list[float]) -> float:
    return sum(w * v for w, v in zip(params[:FEATURES], x, strict=True)) + params[FEATURES]


def mse(params: list[float], samples: list[tuple[list[float], float]]) -> float:
    return sum((predict(params, x) - y) ** 2 for x, y in samples) / len(samples)


def gradient(params: list[float], samples: list[tuple[list[float], float]]) -> list[float]:
    """Gradient of the mean squared error over ``samples`` (weights, then bias)."""
    grad = [0.0] * (FEATURES + 1)
    for x, y in samples:
        error = 2 * (predict(params, x) - y) / len(samples)
        for i, v in enumerate(x):
            grad[i] += error * v
        grad[FEATURES] += error
    return grad


def shard_indices(num_params: int, num_ps: int, ps_index: int) -> list[int]:
    return [i for i in range(num_params) if i % num_ps == ps_index]


# ---------------------------------------------------------------- parameter server


@dataclass
class ParameterServer:
    """Holds one shard of the parameters; every method is safe to call from many threads."""

    size: int
    learning_rate: float
    values: list[float] = field(init=False)
    step: int = 0
    initialized: bool = False
    done: set[int] = field(default_factory=set)
    stopped: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.values = [0.0] * self.size

    def handle(self, message: dict) -> dict:
        op = message.get("op")
        with self._lock:
            if op == "pull":
                return {"values": list(self.values), "step": self.step}
            if op == "push":
                for i, g in enumerate(message["grad"]):
                    self.values[i] -= self.learning_rate * g
                self.step += 1
                return {"step": self.step}
            if op == "init":
                self.initialized = True
                return {"initialized": True}
            if op == "done":
                self.done.add(int(message["worker"]))
                return {"done": sorted(self.done)}
            if op == "status":
                return {
                    "step": self.step,
                    "done": sorted(self.done),
                    "initialized": self.initialized,
                }
            if op == "stop":
                self.stopped.set()
                return {"stopped": True}
        return {"error": f"unknown op {op!r}"}


def serve(ps: ParameterServer, listener: socket.socket, idle_timeout: float) -> bool:
    """Answer requests until told to stop (True) or idle for ``idle_timeout`` s (False)."""
    last_seen = [time.monotonic()]

    def client(conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    message = recv_message(conn)
                except (OSError, ValueError):
                    return
                if message is None:
                    return
                last_seen[0] = time.monotonic()
                send_message(conn, ps.handle(message))

    listener.settimeout(0.2)
    while not ps.stopped.is_set():
        if time.monotonic() - last_seen[0] > idle_timeout:
            return False
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=client, args=(conn,), daemon=True).start()
    return True


def bind_address(address: str, timeout: float) -> tuple[str, int]:
    """Where a PS listens: its own resolved address if loopback, else all interfaces."""
    host, port = split_address(address)
    override = os.environ.get("BIND_ADDRESS")
    if override:
        return override, port
    deadline = time.monotonic() + timeout
    while True:
        try:
            ip = socket.gethostbyname(host)
            return (ip if ip.startswith("127.") else "0.0.0.0"), port
        except OSError:
            if time.monotonic() > deadline:
                return "0.0.0.0", port
            time.sleep(0.2)  # DNS for our own service may appear a moment after we start


def listen(host: str, port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    return listener


# ---------------------------------------------------------------- workers and chief


class ParameterClient:
    """The sharded parameter vector as seen from a worker or the chief."""

    def __init__(self, ps_addresses: list[str], timeout: float) -> None:
        self.peers = [Peer(a, timeout) for a in ps_addresses]
        self.num_params = FEATURES + 1

    def pull(self) -> tuple[list[float], int]:
        params = [0.0] * self.num_params
        step = 0
        for k, peer in enumerate(self.peers):
            reply = peer.call({"op": "pull"})
            indices = shard_indices(self.num_params, len(self.peers), k)
            for i, v in zip(indices, reply["values"], strict=True):
                params[i] = v
            if k == 0:
                step = reply["step"]
        return params, step

    def push(self, grad: list[float]) -> None:
        for k, peer in enumerate(self.peers):
            shard = [grad[i] for i in shard_indices(self.num_params, len(self.peers), k)]
            peer.call({"op": "push", "grad": shard})

    def call_first(self, message: dict) -> dict:
        return self.peers[0].call(message)

    def stop_all(self) -> None:
        for peer in self.peers:
            with contextlib.suppress(ConnectionError, OSError):  # already gone
                peer.call({"op": "stop"})
            peer.close()


@dataclass
class Settings:
    steps: int = 200
    batch_size: int = 16
    learning_rate: float = 0.1
    eval_interval: float = 0.5
    step_delay: float = 0.0
    connect_timeout: float = 120.0
    timeout: float = 300.0
    crash_once_marker: str = ""
    crash_index: int = 1
    crash_exit_code: int = 137


def train(task: Task, settings: Settings, out: Callable[[str], None]) -> None:
    """Run this worker's training steps against the parameter servers."""
    client = ParameterClient(task.ps, settings.connect_timeout)
    data = make_dataset(seed=1000 + task.index, size=256)
    rng = random.Random(task.index)
    wait_for_chief(client, settings)
    out(f"worker {task.index} starting {settings.steps} steps")
    for step in range(settings.steps):
        maybe_crash(task, settings, step, out)
        params, _ = client.pull()
        client.push(gradient(params, rng.sample(data, settings.batch_size)))
        if settings.step_delay:
            time.sleep(settings.step_delay)  # stands in for real compute time per step
    client.call_first({"op": "done", "worker": task.index})
    out(f"worker {task.index} finished")


def wait_for_chief(client: ParameterClient, settings: Settings) -> None:
    """Block until the chief has initialised the model (as TF workers wait for the chief)."""
    deadline = time.monotonic() + settings.timeout
    pause = threading.Event()
    while not client.call_first({"op": "status"})["initialized"]:
        if time.monotonic() > deadline:
            raise TimeoutError("the chief never initialised the model")
        pause.wait(0.05)


def maybe_crash(task: Task, settings: Settings, step: int, out: Callable[[str], None]) -> None:
    if not settings.crash_once_marker or task.index != settings.crash_index or step != 5:
        return
    if os.path.exists(settings.crash_once_marker):
        return
    with open(settings.crash_once_marker, "w") as marker:
        marker.write("crashed once\n")
    out(f"worker {task.index} crashing on purpose with exit code {settings.crash_exit_code}")
    sys.stdout.flush()
    os._exit(settings.crash_exit_code)


def evaluate_until_done(task: Task, settings: Settings, out: Callable[[str], None]) -> float:
    """Print the loss until every worker reported done; then stop the PS. Returns final loss."""
    client = ParameterClient(task.ps, settings.connect_timeout)
    holdout = make_dataset(seed=7, size=200)
    deadline = time.monotonic() + settings.timeout
    stop = threading.Event()
    initialized = False
    while True:
        params, step = client.pull()
        loss = mse(params, holdout)
        out(f"step {step} loss {loss:.3f}")
        if not initialized:
            client.call_first({"op": "init"})
            initialized = True
        done = set(client.call_first({"op": "status"})["done"])
        if done >= set(range(len(task.workers))):
            break
        if time.monotonic() > deadline:
            raise TimeoutError("workers did not finish in time")
        stop.wait(settings.eval_interval)
    params, step = client.pull()
    loss = mse(params, holdout)
    out(f"final step {step} loss {loss:.3f}")
    client.stop_all()
    return loss


def run(task: Task, settings: Settings, out: Callable[[str], None]) -> int:
    """Play this process's role; return its exit code."""
    if not task.ps:
        out("TF_CONFIG has no ps tasks; nothing to do")
        return 1
    if task.type == "ps":
        host, port = bind_address(task.own_address, timeout=10)
        size = len(shard_indices(FEATURES + 1, len(task.ps), task.index))
        ps = ParameterServer(size=size, learning_rate=settings.learning_rate)
        with listen(host, port) as listener:
            out(f"ps {task.index} serving {size} parameters on {host}:{port}")
            stopped = serve(ps, listener, idle_timeout=settings.timeout)
        out(f"ps {task.index} {'stopped' if stopped else 'idle for too long'}")
        return 0 if stopped else 1
    if task.type == "worker" and not task.is_chief:
        train(task, settings, out)
        return 0
    if task.is_chief:
        trainer = None
        if task.type == "worker":  # worker 0 acting as chief also trains
            trainer = threading.Thread(target=train, args=(task, settings, out), daemon=True)
            trainer.start()
        evaluate_until_done(task, settings, out)
        if trainer is not None:
            trainer.join()
        return 0
    out(f"task type {task.type!r} has no role in this example")
    return 0


def parse_args(argv: list[str] | None) -> Settings:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--eval-interval", type=float, default=0.5)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds of fake compute")
    parser.add_argument("--connect-timeout", type=float, default=120.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--crash-once-marker", default="")
    parser.add_argument("--crash-index", type=int, default=1)
    parser.add_argument("--crash-exit-code", type=int, default=137)
    return Settings(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        print("TF_CONFIG is not set; run me as a TFJob replica", file=sys.stderr)
        return 2
    task = parse_tf_config(raw)

    def out(line: str) -> None:
        print(line, flush=True)

    out(f"TF_CONFIG task {task.type}:{task.index} cluster {json.dumps(task.cluster)}")
    try:
        return run(task, settings, out)
    except (ConnectionError, TimeoutError) as err:
        out(f"error: {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
