"""Cluster hosts entries from Services and the pods they select, per-pod files, in-place rewrite."""

import os
import threading

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry
from localcluster.kubelet.dns import SITECUSTOMIZE, ClusterHosts, write_in_place
from localcluster.testing import wait_for

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")


def pod(name, ns, ip, labels, phase="Running", **spec):
    return {
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
        "status": {"phase": phase, "podIP": ip},
    }


def create_pod(registry, body):
    """Create the pod, then write its status as a kubelet does (create drops the status)."""
    namespace = body["metadata"]["namespace"]
    created = registry.create(PODS, namespace, {**body, "status": {}})
    created["status"] = body["status"]
    registry.update(PODS, namespace, body["metadata"]["name"], created, subresource="status")


def test_names_for_headless_and_cluster_ip_services(tmp_path):
    """The names of every service resolve to the pods its selector matches (ready or not),
    never to a pod that finished; Endpoints are not read (kube-apiserver refuses the loopback
    addresses every pod has here)."""
    registry = Registry()
    stop = threading.Event()
    try:
        for ns in ("ns1", "ns2"):
            registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
        hosts = ClusterHosts(
            InProcessClient(registry), str(tmp_path), domains=("cluster.local", "example.org")
        )
        hosts.start(stop)
        registry.create(
            SERVICES,
            "ns1",
            {
                "metadata": {"name": "job-worker-0"},
                "spec": {"clusterIP": "None", "selector": {"r": "w0"}, "ports": [{"port": 2222}]},
            },
        )
        registry.create(
            SERVICES,
            "ns2",
            {
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            },
        )
        registry.create(
            SERVICES,
            "ns2",
            {
                "metadata": {"name": "peers"},
                "spec": {"clusterIP": "None", "selector": {"app": "web"}},
            },
        )
        path = hosts.add_pod("ns1/client", "ns1", "127.1.0.9", "client")
        with open(path) as handle:
            assert "127.1.0.9\tclient" in handle.read()

        create_pod(registry, pod("w0", "ns1", "127.1.0.5", {"r": "w0"}, phase="Pending"))
        create_pod(registry, pod("w0-old", "ns1", "127.1.0.4", {"r": "w0"}, phase="Failed"))
        create_pod(
            registry,
            pod("web-0", "ns2", "127.1.0.6", {"app": "web"}, hostname="h0", subdomain="peers"),
        )

        def content():
            with open(path) as handle:
                text = handle.read()
            return text if "127.1.0.6" in text and "127.1.0.5" in text else None

        text = wait_for(content, 10)
        lines = {tuple(line.split("\t")) for line in text.splitlines()}
        for name in (
            "job-worker-0.ns1.svc",
            "job-worker-0.ns1.svc.cluster.local",
            "job-worker-0.ns1.svc.example.org",
            "job-worker-0.ns1",
            "job-worker-0",
        ):
            assert ("127.1.0.5", name) in lines
        assert not [line for line in lines if line[0] == "127.1.0.4"]  # finished: no address
        assert ("127.1.0.6", "web.ns2.svc") in lines
        assert ("127.1.0.6", "web") not in lines  # bare names only within the pod's namespace
        assert ("127.1.0.6", "h0.web.ns2.svc") not in lines  # per-pod names: headless only
        assert ("127.1.0.6", "h0.peers.ns2.svc") in lines  # ... whose name is the subdomain
        hosts.remove_pod("ns1/client")
        assert not os.path.exists(path)
    finally:
        stop.set()
        registry.stop()


def test_write_in_place_keeps_the_inode(tmp_path):
    path = tmp_path / "hosts"
    write_in_place(str(path), "a long first version\n")
    inode = os.stat(path).st_ino
    write_in_place(str(path), "short\n")
    assert os.stat(path).st_ino == inode and path.read_text() == "short\n"


def test_python_resolver_hook_reads_the_hosts_file(tmp_path, monkeypatch):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.1.0.7\tsvc.ns.svc svc\n")
    monkeypatch.setenv("LOCALCLUSTER_HOSTS_FILE", str(hosts))
    namespace: dict = {}
    import socket

    saved = (socket.getaddrinfo, socket.gethostbyname, socket.gethostbyname_ex)
    try:
        exec(compile(SITECUSTOMIZE, "sitecustomize", "exec"), namespace)
        assert socket.gethostbyname("svc.ns.svc") == "127.1.0.7"
        assert socket.getaddrinfo("SVC", 80)[0][4][0] == "127.1.0.7"
        assert socket.gethostbyname("localhost").startswith("127.")
    finally:
        socket.getaddrinfo, socket.gethostbyname, socket.gethostbyname_ex = saved


def test_own_services_resolve_to_the_pod_before_the_pod_is_seen(tmp_path):
    registry = Registry()
    stop = threading.Event()
    try:
        hosts = ClusterHosts(InProcessClient(registry), str(tmp_path))
        hosts.start(stop)
        registry.create(
            ("", "v1", "services"),
            "default",
            {
                "metadata": {"name": "job-ps-0"},
                "spec": {"clusterIP": "None", "selector": {"replica": "ps-0"}},
            },
        )
        wait_for(lambda: hosts._svc_informer.get("default/job-ps-0"), 10)
        path = hosts.add_pod(
            "default/job-ps-0", "default", "127.1.0.3", "job-ps-0", {"replica": "ps-0"}
        )
        with open(path) as handle:
            lines = set(handle.read().splitlines())
        assert "127.1.0.3\tjob-ps-0.default.svc" in lines
        assert "127.1.0.3\tjob-ps-0.default.svc.cluster.local" in lines
    finally:
        stop.set()
        registry.stop()
