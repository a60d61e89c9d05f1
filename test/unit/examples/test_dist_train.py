"""The local distributed-training example, run in-process: threads on loopback, no cluster."""

import importlib.util
import json
import re
import socket
import sys
import threading
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples/v1/local-dist-training/dist_train.py"
_spec = importlib.util.spec_from_file_location("dist_train_example", EXAMPLE)
dist_train = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = dist_train  # dataclasses look their module up there
_spec.loader.exec_module(dist_train)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tf_config(cluster, task_type, index) -> str:
    return json.dumps(
        {"cluster": cluster, "task": {"type": task_type, "index": index}, "environment": "cloud"},
        separators=(",", ":"),
    )


class Lines:
    def __init__(self):
        self.lines = []
        self.lock = threading.Lock()

    def __call__(self, line):
        with self.lock:
            self.lines.append(line)


def run_cluster(cluster, settings, monkeypatch):
    """Run every task of ``cluster`` in its own thread; return exit codes and chief output."""
    monkeypatch.setenv("BIND_ADDRESS", "127.0.0.1")
    results, outputs, threads = {}, {}, []
    for task_type, addresses in cluster.items():
        for index in range(len(addresses)):
            task = dist_train.parse_tf_config(tf_config(cluster, task_type, index))
            out = outputs[(task_type, index)] = Lines()

            def target(task=task, out=out, key=(task_type, index)):
                results[key] = dist_train.run(task, settings, out)

            threads.append(threading.Thread(target=target, daemon=True))
    for thread in reversed(threads):  # start clients before servers: they must retry
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    return results, outputs


def losses(lines):
    return [float(m.group(1)) for m in (re.search(r"loss (\d+\.\d+)", x) for x in lines) if m]


def test_parse_tf_config_as_the_operator_writes_it():
    text = (
        '{"cluster":{"ps":["mnist-ps-0.kubeflow.svc:2222"],"worker":["mnist-worker-0.kubeflow.svc:2222",'
        '"mnist-worker-1.kubeflow.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}'
    )
    task = dist_train.parse_tf_config(text)
    assert task.type == "worker" and task.index == 1
    assert task.ps == ["mnist-ps-0.kubeflow.svc:2222"]
    assert task.own_address == "mnist-worker-1.kubeflow.svc:2222"
    assert task.chief_type == "worker" and not task.is_chief
    assert dist_train.split_address(task.own_address) == ("mnist-worker-1.kubeflow.svc", 2222)


def test_chief_is_chief_or_master_else_worker_zero():
    cluster = {"chief": ["c:1"], "ps": ["p:1"], "worker": ["w:1"]}
    assert dist_train.Task(cluster, "chief", 0).is_chief
    assert not dist_train.Task(cluster, "worker", 0).is_chief
    assert dist_train.Task({"ps": ["p:1"], "worker": ["w:1"]}, "worker", 0).is_chief
    assert dist_train.Task({"master": ["m:1"], "ps": ["p:1"]}, "master", 0).is_chief


def test_gradient_descent_reduces_loss_locally():
    data = dist_train.make_dataset(seed=1, size=128)
    params = [0.0] * (dist_train.FEATURES + 1)
    before = dist_train.mse(params, data)
    for _ in range(200):
        grad = dist_train.gradient(params, data)
        params = [p - 0.1 * g for p, g in zip(params, grad, strict=True)]
    assert dist_train.mse(params, data) < before / 50
    assert params[dist_train.FEATURES] == pytest.approx(dist_train.TRUE_BIAS, abs=0.05)


def test_messages_round_trip_over_a_socket_pair():
    a, b = socket.socketpair()
    with a, b:
        dist_train.send_message(a, {"op": "push", "grad": [1.5, -2.0]})
        assert dist_train.recv_message(b) == {"op": "push", "grad": [1.5, -2.0]}
        a.close()
        assert dist_train.recv_message(b) is None


def test_parameter_server_applies_sgd_and_tracks_done():
    ps = dist_train.ParameterServer(size=2, learning_rate=0.5)
    assert ps.handle({"op": "push", "grad": [1.0, -2.0]}) == {"step": 1}
    assert ps.handle({"op": "pull"}) == {"values": [-0.5, 1.0], "step": 1}
    ps.handle({"op": "done", "worker": 1})
    assert ps.handle({"op": "status"}) == {"step": 1, "done": [1], "initialized": False}
    ps.handle({"op": "init"})
    assert ps.handle({"op": "status"})["initialized"]
    assert "error" in ps.handle({"op": "nope"})
    ps.handle({"op": "stop"})
    assert ps.stopped.is_set()


@pytest.mark.parametrize("with_chief", [True, False])
def test_distributed_training_converges(monkeypatch, with_chief):
    cluster = {
        "ps": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"],
        "worker": ["127.0.0.1:1", "127.0.0.1:2"],
    }
    if with_chief:
        cluster["chief"] = ["127.0.0.1:3"]
    settings = dist_train.Settings(steps=60, eval_interval=0.05, connect_timeout=20, timeout=60)
    results, outputs = run_cluster(cluster, settings, monkeypatch)
    assert set(results.values()) == {0}
    chief = ("chief", 0) if with_chief else ("worker", 0)
    lines = outputs[chief].lines
    values = losses(lines)
    assert len(values) >= 2
    assert values[-1] < values[0] / 10
    assert lines[-1].startswith("final step ")
    assert any(line.startswith("ps 0 stopped") for line in outputs[("ps", 0)].lines)


def test_connect_gives_up_after_timeout():
    with pytest.raises(ConnectionError):
        dist_train.connect(f"127.0.0.1:{free_port()}", timeout=0.3)


def test_crash_once_uses_marker(tmp_path, monkeypatch):
    codes = []

    def fake_exit(code):
        codes.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(dist_train.os, "_exit", fake_exit)
    marker = tmp_path / "crashed"
    settings = dist_train.Settings(
        crash_once_marker=str(marker), crash_index=1, crash_exit_code=130
    )
    task = dist_train.Task({"ps": ["p:1"], "worker": ["a:1", "b:1"]}, "worker", 1)
    dist_train.maybe_crash(task, settings, step=4, out=print)
    with pytest.raises(SystemExit):
        dist_train.maybe_crash(task, settings, step=5, out=print)
    assert codes == [130] and marker.exists()
    dist_train.maybe_crash(task, settings, step=5, out=print)  # second life: no crash
    other = dist_train.Task(task.cluster, "worker", 0)
    marker.unlink()
    dist_train.maybe_crash(other, settings, step=5, out=print)
    assert codes == [130]


def test_main_requires_tf_config(monkeypatch, capsys):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert dist_train.main([]) == 2
    assert "TF_CONFIG" in capsys.readouterr().err
