"""TF_CONFIG encoding details (Go-compatible JSON), and training-operator v1.9's forms."""

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, DEFAULTS_V1_9
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.controller.v1.tensorflow.tensorflow import (
    gen_tf_config_json_str,
    go_json,
    is_distributed,
    set_cluster_spec,
)


def test_go_json_is_compact_ordered_and_escaped():
    value = {"b": [1, "<&>"], "a": {"x": "é\u2028"}}
    assert go_json(value) == '{"b":[1,"\\u003c\\u0026\\u003e"],"a":{"x":"é\\u2028"}}'


# ---- training-operator v1.9: its pod_test.go ClusterSpec and IsDistributed tables, and
# tensorflow_test.go's sparse cluster spec ------------------------------------------------

NAME = "test-tfjob"


def _tfjob(tfu, namespace="ns", defaults=DEFAULTS_V1_9, **kwargs):
    raw = tfu.new_tfjob(namespace=namespace, **kwargs)
    job = TFJob.from_dict(raw, defaults)
    set_defaults_tfjob(job)
    return job


def _tf_config(job):
    template = job.to_dict()["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    set_cluster_spec(template, job, "worker", 0)
    return {e["name"]: e["value"] for e in template["spec"]["containers"][0].get("env") or []}


@pytest.mark.parametrize(
    "replicas, domain, expected",
    [
        ({"worker": 1}, "", None),
        ({"worker": 1}, "tf.training.com", None),
        (
            {"worker": 1, "ps": 1},
            "tf.training.org",
            f'{{"cluster":{{"ps":["{NAME}-ps-0.ns.svc.tf.training.org:2222"],"worker":["{NAME}'
            '-worker-0.ns.svc.tf.training.org:2222"]},"task":{"type":"worker","index":0},'
            '"environment":"cloud"}',
        ),
        (
            {"worker": 1, "ps": 1, "evaluator": 1},
            "tf.training.io",
            f'{{"cluster":{{"evaluator":["{NAME}-evaluator-0.ns.svc.tf.training.io:2222"],"ps":'
            f'["{NAME}-ps-0.ns.svc.tf.training.io:2222"],"worker":["{NAME}-worker-0.ns.svc.tf.'
            'training.io:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"}',
        ),
        (
            {"worker": 1, "ps": 1, "evaluator": 1},
            "",
            f'{{"cluster":{{"evaluator":["{NAME}-evaluator-0.ns.svc:2222"],"ps":["{NAME}-ps-0.ns.'
            f'svc:2222"],"worker":["{NAME}-worker-0.ns.svc:2222"]}},"task":{{"type":"worker",'
            '"index":0},"environment":"cloud"}',
        ),
    ],
)
def test_v1_9_cluster_spec(tfu, monkeypatch, replicas, domain, expected):
    """With v1.9's defaults: no TF_CONFIG for one replica (D60), the Evaluator listed (D59)."""
    monkeypatch.setenv("CUSTOM_CLUSTER_DOMAIN", domain)
    job = _tfjob(tfu, **replicas)
    assert _tf_config(job).get("TF_CONFIG") == expected


def test_v0_5_3_defaults_keep_a_single_replicas_tf_config_and_leave_the_evaluator_out(tfu):
    single = _tfjob(tfu, defaults=DEFAULTS_V0_5_3, worker=1)
    assert _tf_config(single)["TF_CONFIG"] == (
        f'{{"cluster":{{"worker":["{NAME}-worker-0.ns.svc:2222"]}},"task":{{"type":"worker",'
        '"index":0},"environment":"cloud"}'
    )
    with_evaluator = _tfjob(tfu, defaults=DEFAULTS_V0_5_3, worker=1, evaluator=1)
    assert "evaluator" not in _tf_config(with_evaluator)["TF_CONFIG"]


@pytest.mark.parametrize(
    "replicas, expected",
    [
        ({"worker": 1, "ps": 0}, False),
        ({"worker": 1, "ps": 1}, True),
        ({"worker": 0, "ps": 1}, False),
        ({"worker": 1, "chief": 1}, True),
    ],
)
def test_is_distributed(tfu, replicas, expected):
    assert is_distributed(_tfjob(tfu, **replicas)) is expected


def test_dynamic_workers_get_the_sparse_cluster_spec(tfu):
    """tensorflow_test.go: a worker sees itself and every PS, a PS only itself."""
    job = _tfjob(tfu, namespace="default", worker=2, ps=2, enableDynamicWorker=True)
    host = f"{NAME}-%s.default.svc:2222"
    assert gen_tf_config_json_str(job, "worker", 1) == (
        f'{{"cluster":{{"worker":{{"1":"{host % "worker-1"}"}},"ps":["{host % "ps-0"}","'
        f'{host % "ps-1"}"]}},"task":{{"type":"worker","index":1}}}}'
    )
    assert gen_tf_config_json_str(job, "ps", 0) == (
        f'{{"cluster":{{"worker":{{}},"ps":["{host % "ps-0"}"]}},"task":{{"type":"ps","index":0}}}}'
    )


def test_dynamic_workers_without_ps_see_a_null_ps_list(tfu):
    """Go writes the nil list of a job without PS as null."""
    job = _tfjob(tfu, namespace="default", worker=2, chief=1, enableDynamicWorker=True)
    assert gen_tf_config_json_str(job, "worker", 0).startswith(
        f'{{"cluster":{{"worker":{{"0":"{NAME}-worker-0.default.svc:2222"}},"ps":null}}'
    )
    assert gen_tf_config_json_str(job, "chief", 0) == (
        '{"cluster":{"worker":{},"ps":[]},"task":{"type":"chief","index":0}}'
    )


def test_one_job_versions_pods_share_the_encoded_cluster(tfu, monkeypatch):
    """TFConfig builds the cluster once for all the pods of a job version, and splices each
    pod's task in: byte for byte what encoding the whole value gives, Go escapes included."""
    from tf_operator.controller.v1.tensorflow import tensorflow

    monkeypatch.setenv("CUSTOM_CLUSTER_DOMAIN", "a<b>&c\u2028")
    job = _tfjob(tfu, defaults=DEFAULTS_V0_5_3, worker=3, ps=2)
    built = []
    real = tensorflow.gen_cluster_spec
    monkeypatch.setattr(tensorflow, "gen_cluster_spec", lambda j: built.append(j) or real(j))
    config = tensorflow.TFConfig(job)
    pods = [("worker", i) for i in range(3)] + [("ps", i) for i in range(2)]
    values = [config.value(rt, i) for rt, i in pods]
    assert len(built) == 1
    for (rt, i), value in zip(pods, values, strict=True):
        whole = {"cluster": real(job), "task": {"type": rt, "index": i}, "environment": "cloud"}
        assert value == go_json(whole)
    assert "\\u003c" in values[0] and "\\u2028" in values[0]
    template = job.to_dict()["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    config.apply(template, "worker", 2)
    assert template["spec"]["containers"][0]["env"] == [{"name": "TF_CONFIG", "value": values[2]}]
