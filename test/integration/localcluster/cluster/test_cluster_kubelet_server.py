"""The kubelets' HTTPS server, as kube-apiserver's ``pods/log`` proxy reaches it: every node
names its port, a client presenting a certificate the cluster's CA signed reads a container's
log with the kubelet's query options, and a client without one is refused at the handshake."""

from __future__ import annotations

import socket
import ssl
import time
from datetime import datetime

import pytest
import urllib3

from localcluster import LocalCluster, SimulatedTiming
from localcluster.kubelet import EXIT_CODE, RUN_SECONDS
from localcluster.pki import CertificateAuthority
from localcluster.testing import wait_for

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")


@pytest.fixture(scope="module")
def cluster():
    timing = SimulatedTiming(start_delay=0.05, restart_delay=0.05)
    with LocalCluster(kubelet="simulated", nodes=2, simulated=timing, kubelet_server=True) as c:
        pod = {
            "metadata": {"name": "talker", "annotations": {RUN_SECONDS: "0.2", EXIT_CODE: "1,0"}},
            "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "main", "image": "x"}]},
        }
        c.client.create(PODS, "default", pod)
        wait_for(
            lambda: c.client.get(PODS, "default", "talker")["status"].get("phase") == "Succeeded",
            20,
            what="the pod failed once, then succeeded",
        )
        yield c


def pool(cluster: LocalCluster, with_cert: bool = True) -> urllib3.PoolManager:
    pki = cluster.kubelet_pki
    assert pki is not None and pki.client is not None
    cert = {"cert_file": pki.client.cert_file, "key_file": pki.client.key_file} if with_cert else {}
    return urllib3.PoolManager(
        cert_reqs="CERT_REQUIRED", ca_certs=pki.ca_file, retries=False, **cert
    )


def logs(cluster: LocalCluster, path: str, **query: object) -> urllib3.BaseHTTPResponse:
    url = f"https://127.0.0.1:{cluster.kubelet_port}{path}"
    return pool(cluster).request("GET", url, fields={k: str(v) for k, v in query.items()})


def test_every_node_names_the_server_and_loopback(cluster: LocalCluster) -> None:
    for node in cluster.client.list(NODES).items:
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == cluster.kubelet_port
        internal = [a for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
        assert internal == [{"type": "InternalIP", "address": "127.0.0.1"}]


def test_a_client_certificate_reads_the_log_with_the_kubelets_options(cluster) -> None:
    path = "/containerLogs/default/talker/main"
    whole = logs(cluster, path)
    assert whole.status == 200 and whole.headers["Content-Type"].startswith("text/plain")
    lines = whole.data.decode().splitlines()
    assert lines[0] == "simulated container main attempt 0 started"
    assert lines[-1] == "simulated container main exited with code 0"
    assert logs(cluster, path, tailLines=1).data.decode() == lines[-1] + "\n"
    assert logs(cluster, path, limitBytes=9).data == b"simulated"
    stamped = logs(cluster, path, timestamps="true").data.decode().splitlines()
    stamp, text = stamped[0].split(" ", 1)
    assert text == lines[0]
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    assert abs(when - time.time()) < 120 and len(stamp.split(".")[1]) == len("000000000Z")
    assert logs(cluster, path, sinceSeconds=3600).data == whole.data
    last = datetime.fromisoformat(stamped[-1].split(" ", 1)[0].replace("Z", "+00:00"))
    wait_for(lambda: time.time() - last.timestamp() > 1.2, 5, what="a second past the last line")
    assert logs(cluster, path, sinceSeconds=1).data == b""


def test_refusals_as_the_kubelet_gives_them(cluster: LocalCluster) -> None:
    assert logs(cluster, "/containerLogs/default/absent/main").status == 404
    assert logs(cluster, "/containerLogs/default/talker/other").status == 404
    assert logs(cluster, "/containerLogs/default/talker/main", tailLines=-1).status == 422
    both = logs(cluster, "/containerLogs/default/talker/main", sinceSeconds=1, sinceTime="x")
    assert both.status == 422
    assert logs(cluster, "/healthz").data == b"ok"


def test_a_client_without_a_certificate_is_refused(cluster: LocalCluster) -> None:
    url = f"https://127.0.0.1:{cluster.kubelet_port}/containerLogs/default/talker/main"
    with pytest.raises(urllib3.exceptions.HTTPError):  # the handshake is refused
        pool(cluster, with_cert=False).request("GET", url)


def test_a_certificate_from_another_ca_is_refused(cluster: LocalCluster, tmp_path) -> None:
    other = CertificateAuthority.create(str(tmp_path), "someone-else")
    stranger = other.issue("stranger", "kube-apiserver", client=True)
    pki = cluster.kubelet_pki
    assert pki is not None
    http = urllib3.PoolManager(
        cert_reqs="CERT_REQUIRED",
        ca_certs=pki.ca_file,
        cert_file=stranger.cert_file,
        key_file=stranger.key_file,
        retries=False,
    )
    url = f"https://127.0.0.1:{cluster.kubelet_port}/containerLogs/default/talker/main"
    with pytest.raises(urllib3.exceptions.HTTPError):
        http.request("GET", url)


def test_the_serving_certificate_is_the_clusters_ca_for_loopback(cluster: LocalCluster) -> None:
    pki = cluster.kubelet_pki
    assert pki is not None and pki.client is not None
    context = ssl.create_default_context(cafile=pki.ca_file)
    context.load_cert_chain(pki.client.cert_file, pki.client.key_file)
    raw = socket.create_connection(("127.0.0.1", cluster.kubelet_port))
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        assert tls.getpeercert()["subject"] == ((("commonName", "localcluster-kubelet"),),)


def test_the_emulator_runs_no_kubelet_server_unless_asked() -> None:
    with LocalCluster(kubelet="simulated") as plain:
        assert plain.kubelet_port is None and plain.kubelet_pki is None
        node = plain.client.list(NODES).items[0]
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == 0


def test_process_pods_logs_carry_the_time_of_each_line() -> None:
    script = "echo one; sleep 1.2; echo two; sleep 0.5; printf three"
    with LocalCluster(kubelet="process", kubelet_server=True) as cluster:
        pod = {
            "metadata": {"name": "timed"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "x", "command": ["sh", "-c", script]}],
            },
        }
        cluster.client.create(PODS, "default", pod)
        path = "/containerLogs/default/timed/c"
        followed = logs(cluster, path, follow="true")  # ends when the container does
        assert followed.data == b"one\ntwo\nthree"
        stamped = logs(cluster, path, timestamps="true").data.decode().splitlines()
        assert [line.split(" ", 1)[1] for line in stamped] == ["one", "two", "three"]
        times = [datetime.fromisoformat(s.split(" ", 1)[0].replace("Z", "+00:00")) for s in stamped]
        assert (times[1] - times[0]).total_seconds() >= 1.0
        since = times[1].timestamp() - 0.1
        since_text = datetime.fromtimestamp(since, tz=times[1].tzinfo).isoformat()
        assert logs(cluster, path, sinceTime=since_text).data == b"two\nthree"
        assert logs(cluster, path, tailLines=1, timestamps="true").data.decode().endswith(" three")
        wait_for(
            lambda: cluster.client.get(PODS, "default", "timed")["status"]["phase"] == "Succeeded",
            10,
            what="the pod succeeded",
        )


def test_a_container_not_started_or_without_a_previous_instance_is_a_400() -> None:
    """As the real kubelet answers (a log follower then retries instead of reading an empty
    log as the end): a container that has not started is "waiting to start", and `previous`
    of a container that never restarted names no terminated instance."""
    import sys

    with LocalCluster(kubelet="process", kubelet_server=True) as c:
        never = {  # its ConfigMap volume never comes: the container waits to start
            "metadata": {"name": "never"},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "localcluster/none",
                        "command": ["true"],
                        "volumeMounts": [{"name": "code", "mountPath": "/opt/code"}],
                    }
                ],
                "volumes": [{"name": "code", "configMap": {"name": "absent"}}],
            },
        }
        sleeper = {
            "metadata": {"name": "sleeper"},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "localcluster/none",
                        "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                    }
                ]
            },
        }
        c.client.create(PODS, "default", never)
        c.client.create(PODS, "default", sleeper)
        wait_for(
            lambda: c.client.get(PODS, "default", "sleeper")["status"].get("phase") == "Running",
            30,
            what="the sleeper running",
        )
        waiting = logs(c, "/containerLogs/default/never/main")
        assert waiting.status == 400
        assert waiting.data.decode() == (
            'container "main" in pod "never" is waiting to start: ContainerCreating\n'
        )
        previous = logs(c, "/containerLogs/default/sleeper/main", previous="true")
        assert previous.status == 400
        assert b'previous terminated container "main" in pod "sleeper" not found' in previous.data
        assert logs(c, "/containerLogs/default/sleeper/main").status == 200
