"""apiserver_request_total: request classification, the counters, and their /metrics text."""

import http.client
import json

import pytest

from localcluster.controlplane.emulated import APIServer
from localcluster.controlplane.emulated.serving.request_metrics import RequestMetrics, classify


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces/default/pods", {}, ("list", "pods")),
        ("GET", "/api/v1/namespaces/default/pods", {"watch": "true"}, ("watch", "pods")),
        ("GET", "/api/v1/namespaces/default/pods/p", {}, ("get", "pods")),
        (
            "PUT",
            "/apis/kubeflow.org/v1/namespaces/ns/tfjobs/j/status",
            {},
            ("update", "tfjobs/status"),
        ),
        ("POST", "/api/v1/namespaces/default/services", {}, ("create", "services")),
        ("PATCH", "/api/v1/namespaces/default/events/e", {}, ("patch", "events")),
        ("DELETE", "/api/v1/namespaces/default/pods/p", {}, ("delete", "pods")),
        ("DELETE", "/api/v1/namespaces/default/pods", {}, ("deletecollection", "pods")),
        ("GET", "/api/v1/namespaces/default", {}, ("get", "namespaces")),
        ("GET", "/api/v1/nodes", {}, ("list", "nodes")),
        ("GET", "/version", {}, ("get", "")),
    ],
)
def test_classify(method, path, query, expected):
    assert classify(method, path, query) == expected


def test_render_counts_by_client():
    metrics = RequestMetrics()
    for _ in range(3):
        metrics.observe("tf-operator/0.5.3 (linux)", "POST", "/api/v1/namespaces/a/pods", {}, 201)
    metrics.observe("kubectl/v1.32.4", "GET", "/api/v1/namespaces/a/pods", {}, 200)
    text = metrics.render().decode()
    assert (
        'apiserver_request_total{client="tf-operator",code="201",resource="pods",verb="create"} 3'
        in text
    )
    assert 'client="kubectl",code="200",resource="pods",verb="list"} 1' in text


def test_server_serves_metrics_of_requests_it_answered():
    with APIServer() as server:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
        body = json.dumps({"metadata": {"name": "cm"}, "data": {"a": "b"}})
        headers = {"User-Agent": "bench-client/1.0", "Content-Type": "application/json"}
        conn.request("POST", "/api/v1/namespaces/default/configmaps", body, headers)
        created = conn.getresponse()
        created.read()
        assert created.status == 201
        conn.request("GET", "/api/v1/namespaces/default/configmaps/missing", headers=headers)
        conn.getresponse().read()
        conn.request("GET", "/metrics")
        reply = conn.getresponse()
        text = reply.read().decode()
        assert reply.status == 200
        assert 'client="bench-client",code="201",resource="configmaps",verb="create"} 1' in text
        assert 'client="bench-client",code="404",resource="configmaps",verb="get"} 1' in text
