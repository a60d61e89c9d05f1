"""Input that must not wedge a job or the operator (issue 27, items 4 and 5), on the real
operator and API server: a pod template nested deeper than orjson goes fails its job with a
message naming the cause (D70) while a job beside it runs; ports the CRD refuses are refused
at admission with the field named."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from .conftest import NS, TFJOBS

pytestmark = pytest.mark.integration


def _nest(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


def _post(env, path: str, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(env.cluster.url + path, data=body, method="POST")
    req.add_header("Authorization", f"Bearer {env._token}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _encoded(job: dict) -> bytes:
    from tf_operator.k8s.client.rest import encode

    return encode(job)


@pytest.mark.parametrize("depth", [300, 900])
def test_a_deeply_nested_job_fails_with_its_cause_and_wedges_nothing(env, depth):
    op = env.operator()
    deep = env.job_body("deep", workers=1, run_seconds=0.5)
    deep["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"]["labels"] = {"a": "b"}
    deep["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["extra"] = _nest(depth)
    code, body = _post(env, f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", _encoded(deep))
    assert code == 201, body
    env.create_job("beside", workers=1, run_seconds=0.5)
    env.wait_succeeded(["beside"], timeout=60)
    env.wait_for(lambda: env.condition("deep", "Failed"), 30, "the deep job failed")
    (condition,) = [c for c in env.get_job("deep")["status"]["conditions"] if c["type"] == "Failed"]
    assert condition["reason"] == "InvalidTFJobSpec"
    assert "at spec.tfReplicaSpecs.PS.template.spec.extra.x" in condition["message"]
    assert "at most 100 levels deep" in condition["message"]
    assert not [p for p in env.pods() if p["metadata"]["labels"].get("tf-job-name") == "deep"]
    assert "Recursion limit" not in op.text() and "depth limit" not in op.text()


@pytest.mark.parametrize("port", [70000, 0, True, 2222.5, "2222", "abc"])
def test_a_bad_tfjob_port_is_refused_at_admission(env, port):
    job = env.job_body("ports", workers=1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "tfjob-port", "containerPort": port}
    ]
    code, status = _post(
        env, f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", json.dumps(job).encode()
    )
    assert code == 422, status
    assert "containerPort" in status["message"]
    assert not env.registry.list(TFJOBS, NS)[0]
