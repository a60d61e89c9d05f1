"""Cluster hosts entries from Services/Endpoints, per-pod files, in-place rewrite."""

import os
import threading

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry
from localcluster.kubelet.dns import SITECUSTOMIZE, ClusterHosts, write_in_place
from localcluster.testing import wait_for


def endpoints(name, ns, ready=(), not_ready=(), hostname=None):
    subset = {"ports": [{"port": 2222}]}
    if ready:
        subset["addresses"] = [
            {"ip": ip, **({"hostname": hostname} if hostname else {})} for ip in ready
        ]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": ip} for ip in not_ready]
    return {"metadata": {"name": name, "namespace": ns}, "subsets": [subset]}


def test_names_for_headless_and_cluster_ip_services(tmp_path):
    registry = Registry()
    stop = threading.Event()
    try:
        for ns in ("ns1", "ns2"):
            registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
        hosts = ClusterHosts(
            InProcessClient(registry), str(tmp_path), domains=("cluster.local", "example.org")
        )
        hosts.start(stop)
        services = ("", "v1", "services")
        eps = ("", "v1", "endpoints")
        registry.create(
            services,
            "ns1",
            {
                "metadata": {"name": "job-worker-0"},
                "spec": {"clusterIP": "None", "ports": [{"port": 2222}]},
            },
        )
        registry.create(
            services, "ns2", {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
        )
        path = hosts.add_pod("ns1/client", "ns1", "127.1.0.9", "client")
        with open(path) as handle:
            assert "127.1.0.9\tclient" in handle.read()

        registry.create(eps, "ns1", endpoints("job-worker-0", "ns1", not_ready=["127.1.0.5"]))
        registry.create(eps, "ns2", endpoints("web", "ns2", ready=["127.1.0.6"], hostname="h0"))

        def content():
            with open(path) as handle:
                text = handle.read()
            return text if "127.1.0.6" in text else None

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
        assert ("127.1.0.6", "web.ns2.svc") in lines
        assert ("127.1.0.6", "web") not in lines  # bare names only within the pod's namespace
        assert ("127.1.0.6", "h0.web.ns2.svc") not in lines  # per-address names: headless only
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


def test_own_services_resolve_to_the_pod_before_endpoints_exist(tmp_path):
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
