"""LocalCluster with the process kubelet: real processes, kubectl logs, DNS, deletion."""

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from localcluster import LocalCluster
from localcluster.testing import (
    cluster_fixture,
    kubectl,
    pod_phase_is,
    wait_for,
    wait_for_pod,
)

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
PY = sys.executable


cluster = cluster_fixture(kubelet="process", nodes=1)


def run_pod(cluster, name, script, restart_policy="Never", labels=None, env=None, grace=None):
    spec = {
        "restartPolicy": restart_policy,
        "containers": [
            {
                "name": "main",
                "image": "python:3.11",
                "command": [PY, "-u", "-c", script],
                "env": env or [],
            }
        ],
    }
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    body = {"metadata": {"name": name, "labels": labels or {}}, "spec": spec}
    return cluster.registry.create(PODS, "default", body)


def alive(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_kubectl_logs_and_follow(cluster, tmp_path):
    gate = tmp_path / "go"
    script = (
        "import os, time\n"
        "print('tick 0')\n"
        f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)\n"
        "for i in range(1, 4):\n    print('tick', i)\n"
    )
    run_pod(cluster, "logger", script)
    wait_for_pod(cluster.registry, "default", "logger", pod_phase_is("Running"))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "KUBECONFIG": cluster.kubeconfig}
    follower = subprocess.Popen(
        ["kubectl", "logs", "-f", "logger"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert follower.stdout.readline() == "tick 0\n"  # streamed while the container runs
        assert follower.poll() is None
        gate.touch()
        rest = follower.stdout.read()  # kubectl exits when the container ends
        assert follower.wait(timeout=30) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
    assert rest == "tick 1\ntick 2\ntick 3\n"
    pod = wait_for_pod(cluster.registry, "default", "logger", pod_phase_is("Succeeded"))
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    assert kubectl(cluster, "logs", "logger", "--tail=1").stdout == "tick 3\n"


def test_env_tf_config_and_field_refs(cluster):
    tf_config = json.dumps({"cluster": {"worker": ["w-0.default.svc:2222"]}, "task": {"index": 0}})
    env = [
        {"name": "TF_CONFIG", "value": tf_config},
        {"name": "MY_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    script = "import os\nprint(os.environ['MY_NAME'], os.environ['MY_IP'], os.environ['TF_CONFIG'])"
    run_pod(cluster, "envpod", script, env=env)
    pod = wait_for_pod(cluster.registry, "default", "envpod", pod_phase_is("Succeeded"))
    logs = kubectl(cluster, "logs", "envpod").stdout
    assert logs == f"envpod {pod['status']['podIP']} {tf_config}\n"


def test_exit_by_signal_reports_128_plus_n_and_fails(cluster):
    run_pod(cluster, "killed", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    pod = wait_for_pod(cluster.registry, "default", "killed", pod_phase_is("Failed"))
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "Error")


def test_on_failure_restarts_in_place(cluster):
    # fails on the first run (no marker file in the sandbox working dir), succeeds after
    script = (
        "import os, sys\n"
        "if os.path.exists('ran'):\n    print('second run'); sys.exit(0)\n"
        "open('ran', 'w').close(); print('first run'); sys.exit(3)\n"
    )
    run_pod(cluster, "flaky", script, restart_policy="OnFailure")
    pod = wait_for_pod(cluster.registry, "default", "flaky", pod_phase_is("Succeeded"))
    status = pod["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 3
    assert kubectl(cluster, "logs", "flaky").stdout == "second run\n"
    assert kubectl(cluster, "logs", "flaky", "--previous").stdout == "first run\n"


def test_container_without_command_fails_clearly(cluster):
    cluster.registry.create(
        PODS,
        "default",
        {
            "metadata": {"name": "imageonly"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "nginx"}]},
        },
    )
    pod = wait_for_pod(cluster.registry, "default", "imageonly", pod_phase_is("Failed"))
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["reason"] == "ContainerCannotRun"
    assert "command" in terminated["message"]
    described = kubectl(cluster, "describe", "pod", "imageonly").stdout
    assert "ContainerCannotRun" in described and "not in its image table" in described


def test_pod_reaches_another_pod_by_service_dns_name(cluster):
    cluster.registry.create(
        SERVICES,
        "default",
        {
            "metadata": {"name": "echo"},
            "spec": {"clusterIP": "None", "selector": {"app": "echo"}, "ports": [{"port": 2222}]},
        },
    )
    # the client starts first: the name resolves only once the server pod exists
    client = (
        "import socket, time\n"
        "for _ in range(300):\n"
        "    try:\n"
        "        conn = socket.create_connection(('echo.default.svc', 2222), timeout=2)\n"
        "        break\n"
        "    except OSError:\n"
        "        time.sleep(0.1)\n"
        "print('client got:', conn.recv(100).decode())\n"
        "long = socket.gethostbyname('echo.default.svc.cluster.local')\n"
        "print('fqdn resolves to', long)\n"
    )
    run_pod(cluster, "dns-client", client)
    server = (
        "import os, socket\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind((os.environ['POD_IP'], 2222)); s.listen()  # pods share the host's ports\n"
        "conn, _ = s.accept(); conn.sendall(b'hello from ' + os.environ['HOSTNAME'].encode())\n"
    )
    pod_ip = [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    run_pod(cluster, "dns-server", server, labels={"app": "echo"}, env=pod_ip)
    client_pod = wait_for_pod(
        cluster.registry, "default", "dns-client", pod_phase_is("Succeeded", "Failed"), 60
    )
    logs = kubectl(cluster, "logs", "dns-client").stdout
    assert client_pod["status"]["phase"] == "Succeeded", logs
    server_ip = cluster.registry.get(PODS, "default", "dns-server")["status"]["podIP"]
    assert logs == f"client got: hello from dns-server\nfqdn resolves to {server_ip}\n"


def write_pid_script(handle_term):
    handler = (
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))"
        if handle_term
        else "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
    )
    return (
        f"import os, signal, sys, time\n{handler}\n"
        "print(os.getpid(), flush=True)\n"
        "while True:\n    time.sleep(0.1)\n"
    )


def pid_of(cluster, name):
    return int(wait_for(lambda: kubectl(cluster, "logs", name).stdout.strip(), 20))


def test_deleting_a_pod_kills_an_obstinate_process_after_the_grace_period(cluster):
    run_pod(cluster, "stubborn", write_pid_script(handle_term=False), grace=1)
    wait_for_pod(cluster.registry, "default", "stubborn", pod_phase_is("Running"))
    pid = pid_of(cluster, "stubborn")
    assert alive(pid)
    started = time.monotonic()
    deleted = cluster.registry.delete(PODS, "default", "stubborn")
    assert deleted["metadata"]["deletionGracePeriodSeconds"] == 1
    assert cluster.registry.get(PODS, "default", "stubborn")["metadata"]["deletionTimestamp"]
    wait_for(lambda: not alive(pid), 10)
    wait_for(
        lambda: (
            "stubborn"
            not in {p["metadata"]["name"] for p in cluster.registry.list(PODS, "default")[0]}
        ),
        10,
    )
    assert time.monotonic() - started >= 0.9  # SIGTERM was ignored: SIGKILL came after the grace


def test_deleting_a_pod_stops_a_cooperative_process_at_once(cluster):
    run_pod(cluster, "polite", write_pid_script(handle_term=True), grace=30)
    wait_for_pod(cluster.registry, "default", "polite", pod_phase_is("Running"))
    pid = pid_of(cluster, "polite")
    result = kubectl(cluster, "delete", "pod", "polite", "--timeout=20s")
    assert result.returncode == 0, result.stderr
    assert not alive(pid)


@pytest.mark.parametrize("dns", ["mount", "python"])
def test_dns_modes_resolve_custom_domains_lazily(dns):
    from localcluster.kubelet.dns import probe_mount_namespace

    if dns == "mount" and not probe_mount_namespace():
        pytest.skip("mount namespaces unavailable here")
    with LocalCluster(
        kubelet="process", dns=dns, cluster_domains=("cluster.local", "corp.example")
    ) as c:
        c.registry.create(
            SERVICES,
            "default",
            {
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]},
            },
        )
        client = (
            "import socket, time\n"
            "for _ in range(300):\n"
            "    try:\n"
            "        print(socket.gethostbyname('web.default.svc.corp.example')); break\n"
            "    except OSError:\n"
            "        time.sleep(0.1)\n"
        )
        run_pod(c, "resolver", client)
        run_pod(c, "web", "import time\ntime.sleep(600)", labels={"app": "web"})
        web_ip = wait_for_pod(c.registry, "default", "web", pod_phase_is("Running"))["status"][
            "podIP"
        ]
        wait_for_pod(c.registry, "default", "resolver", pod_phase_is("Succeeded"), 60)
        assert kubectl(c, "logs", "resolver").stdout == f"{web_ip}\n"
        assert c.dns_mode == dns


PEER = """
import json, os, socket, sys, time
config = json.loads(os.environ["TF_CONFIG"])
me = config["task"]["index"]
hosts = config["cluster"]["worker"]
host, port = hosts[me].rsplit(":", 1)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((host, int(port)))  # our own service name resolves to our pod IP
server.listen()
peer_host, peer_port = hosts[1 - me].rsplit(":", 1)
for _ in range(300):
    try:
        conn = socket.create_connection((peer_host, int(peer_port)), timeout=2)
        break
    except OSError:
        time.sleep(0.1)
conn.sendall(f"hello from worker {me}".encode())
conn.close()
incoming, _ = server.accept()
print(incoming.recv(100).decode())
"""


def test_tf_config_peers_bind_and_connect_by_service_names(cluster):
    names = [f"pair-worker-{i}" for i in range(2)]
    for name in names:
        cluster.registry.create(
            SERVICES,
            "default",
            {
                "metadata": {"name": name},
                "spec": {
                    "clusterIP": "None",
                    "selector": {"replica": name},
                    "ports": [{"port": 2222}],
                },
            },
        )
    workers = [f"{n}.default.svc:2222" for n in names]
    for index, name in enumerate(names):
        tf_config = json.dumps(
            {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        )
        run_pod(
            cluster,
            name,
            PEER,
            labels={"replica": name},
            env=[{"name": "TF_CONFIG", "value": tf_config}],
        )
    for index, name in enumerate(names):
        pod = wait_for_pod(
            cluster.registry, "default", name, pod_phase_is("Succeeded", "Failed"), 60
        )
        logs = kubectl(cluster, "logs", name).stdout
        assert pod["status"]["phase"] == "Succeeded", logs
        assert logs == f"hello from worker {1 - index}\n"


def test_background_children_die_with_the_container(cluster, tmp_path):
    pid_file = tmp_path / "child.pid"
    cluster.registry.create(
        PODS,
        "default",
        {
            "metadata": {"name": "forker"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "command": ["sh", "-c", f"sleep 600 & echo $! > {pid_file}; exit 0"],
                    }
                ],
            },
        },
    )
    wait_for_pod(cluster.registry, "default", "forker", pod_phase_is("Succeeded"))
    child = int(wait_for(lambda: pid_file.read_text().strip(), 10))
    wait_for(lambda: not alive(child), 10)
