import json

from tf_operator.k8s.client import errors as e


def test_reason_decides_before_code():
    err = e.from_response(409, json.dumps(e.status_body(409, "AlreadyExists", "x exists")).encode())
    assert e.is_already_exists(err) and not e.is_conflict(err)
    assert err.status == 409 and err.message == "x exists"
    conflict = e.new_conflict("tfjobs", "j", "stale", "kubeflow.org")
    assert e.is_conflict(conflict) and not e.is_already_exists(conflict)
    assert conflict.body["details"]["group"] == "kubeflow.org"


def test_code_fallback_without_status_body():
    err = e.from_response(404, b"404 page not found")
    assert e.is_not_found(err) and err.reason == "NotFound" and err.body is None
    err = e.from_response(418, b"")
    assert err.reason == "Unknown" and not e.is_not_found(err)


def test_expired_and_gone():
    assert e.is_resource_expired(e.new_resource_expired())
    assert e.is_resource_expired(e.from_response(410, b""))
    gone = e.from_status({"kind": "Status", "code": 410, "reason": "Gone", "message": "m"})
    assert e.is_resource_expired(gone)
    assert not e.is_resource_expired(e.new_not_found("pods", "p"))


def test_retry_after_and_transport():
    err = e.from_response(429, b"{}", {"Retry-After": "3"})
    assert e.is_too_many_requests(err) and err.retry_after == 3.0
    assert e.new_too_many_requests("slow", 2).retry_after == 2.0
    t = e.TransportError("refused")
    assert isinstance(t, e.ApiError) and t.status == 0
    assert not any(f(t) for f in (e.is_not_found, e.is_conflict, e.is_resource_expired))
    assert not e.is_not_found(ValueError("x"))


def test_messages_match_apiserver():
    assert str(e.new_not_found("pods", "p1").message) == 'pods "p1" not found'
    assert e.new_already_exists("tfjobs", "j", "kubeflow.org").message == (
        'tfjobs.kubeflow.org "j" already exists'
    )
