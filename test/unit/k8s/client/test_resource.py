"""Resource paths: valid names as they are, anything else percent-encoded."""

from tf_operator.k8s.client.resource import LEASES, PODS


def test_paths_of_collections_objects_and_subresources():
    assert PODS.path() == "/api/v1/pods"
    assert PODS.path("default") == "/api/v1/namespaces/default/pods"
    assert PODS.path("default", "job-worker-0") == "/api/v1/namespaces/default/pods/job-worker-0"
    lease = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l.1/status"
    assert LEASES.path("ns", "l.1", "status") == lease


def test_names_outside_the_unreserved_characters_are_percent_encoded():
    assert PODS.path("a b", "x/y?#%") == "/api/v1/namespaces/a%20b/pods/x%2Fy%3F%23%25"
    assert PODS.path("ns", "Ünï") == "/api/v1/namespaces/ns/pods/%C3%9Cn%C3%AF"
