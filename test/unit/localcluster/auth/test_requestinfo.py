"""Request attributes as kube-apiserver's RequestInfoFactory derives them."""

import pytest

from localcluster.controlplane.emulated.auth.requestinfo import request_attributes


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/pods", {}, ("list", "", "pods", "", "", "")),
        ("GET", "/api/v1/namespaces/ns/pods/p", {}, ("get", "", "pods", "", "ns", "p")),
        ("GET", "/api/v1/namespaces/ns/pods", {"watch": "1"}, ("watch", "", "pods", "", "ns", "")),
        ("GET", "/api/v1/watch/namespaces/ns/pods/p", {}, ("watch", "", "pods", "", "ns", "p")),
        ("POST", "/api/v1/namespaces/ns/pods", {}, ("create", "", "pods", "", "ns", "")),
        ("PUT", "/apis/kubeflow.org/v1/namespaces/ns/tfjobs/j/status", {},
         ("update", "kubeflow.org", "tfjobs", "status", "ns", "j")),
        ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", {},
         ("patch", "apps", "deployments", "scale", "ns", "d")),
        ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "", "pods", "", "ns", "")),
        ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, ("delete", "", "pods", "", "ns", "p")),
        ("GET", "/api/v1/namespaces/ns", {}, ("get", "", "namespaces", "", "ns", "ns")),
        ("PUT", "/api/v1/namespaces/ns/finalize", {},
         ("update", "", "namespaces", "finalize", "ns", "ns")),
        ("GET", "/api/v1/nodes/n", {}, ("get", "", "nodes", "", "", "n")),
        ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name=p"},
         ("list", "", "pods", "", "ns", "p")),
        ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name!=p"},
         ("list", "", "pods", "", "ns", "")),
    ],
)  # fmt: skip
def test_resource_requests(method, path, query, expected):
    attrs = request_attributes(method, path, query)
    assert attrs.resource_request
    got = (attrs.verb, attrs.api_group, attrs.resource, attrs.subresource)
    assert got + (attrs.namespace, attrs.name) == expected


@pytest.mark.parametrize(
    "path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/version", "/healthz"]
)
def test_non_resource_requests(path):
    attrs = request_attributes("GET", path, {})
    assert not attrs.resource_request and attrs.verb == "get" and attrs.path == path
