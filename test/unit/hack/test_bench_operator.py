"""Pure helpers of hack/bench_operator.py: percentiles, request classification, the request
metric parser, the request-log counter and the job manifest (the counting proxy, which needs
servers, is tested in test/integration/hack)."""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _load():
    spec = importlib.util.spec_from_file_location("bench_operator", ROOT / "hack/bench_operator.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_operator"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_percentile_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert bench.percentile(values, 50) == 50.0
    assert bench.percentile(values, 99) == 99.0
    assert bench.percentile(values, 100) == 100.0
    assert bench.percentile([3.0], 99) == 3.0
    assert bench.percentile([], 50) is None


@pytest.mark.parametrize(
    ("method", "target", "expected"),
    [
        ("POST", "/api/v1/namespaces/default/pods", ("create", "pods")),
        ("GET", "/api/v1/namespaces/default/pods/p-0", ("get", "pods")),
        ("GET", "/api/v1/pods?resourceVersion=0", ("list", "pods")),
        (
            "GET",
            "/api/v1/namespaces/ns/services?watch=true&resourceVersion=5",
            ("watch", "services"),
        ),
        (
            "PUT",
            "/apis/kubeflow.org/v1/namespaces/default/tfjobs/j/status",
            ("update", "tfjobs/status"),
        ),
        ("PATCH", "/api/v1/namespaces/default/events/e.1", ("patch", "events")),
        ("DELETE", "/api/v1/namespaces/default/pods/p-0", ("delete", "pods")),
        ("DELETE", "/api/v1/namespaces/default/pods", ("deletecollection", "pods")),
        ("GET", "/apis/kubeflow.org/v1/tfjobs?watch=1", ("watch", "tfjobs")),
        ("GET", "/api/v1/nodes/n1", ("get", "nodes")),
        ("GET", "/apis", ("", "")),
        ("GET", "/version", ("", "")),
    ],
)
def test_classify_request(method, target, expected):
    assert bench.classify_request(method, target) == expected


def test_parse_request_metric_filters_client_and_normalises_verbs():
    text = "\n".join(
        [
            "# HELP apiserver_request_total requests",
            "# TYPE apiserver_request_total counter",
            'apiserver_request_total{client="tf-operator",code="201",resource="pods",verb="POST"} 5',
            'apiserver_request_total{client="tf-operator",code="409",resource="pods",verb="POST"} 1',
            'apiserver_request_total{client="kubectl",code="200",resource="pods",verb="LIST"} 7',
            'apiserver_request_total{client="tf-operator",code="200",resource="tfjobs/status",'
            'verb="PUT"} 3',
            "other_metric 4",
        ]
    )
    counts = bench.parse_request_metric(text)
    assert counts == Counter({("create", "pods"): 6, ("update", "tfjobs/status"): 3})
    assert bench.parse_request_metric("other_metric 1\n") is None
    # declared but no request served yet: present, all zero
    declared = "# TYPE apiserver_request_total counter\n"
    assert bench.parse_request_metric(declared) == Counter()


def test_minimum_requests_per_job_for_one_ps_four_workers():
    minimum = bench.minimum_requests_per_job(1, 4)
    assert minimum["pods create"] == 5
    assert minimum["services create"] == 5
    assert minimum["tfjobs/status update"] == 3
    # 5 + 5 creates, PS pod + service deletes, ExitedWithCode (worker 0), TFJobSucceeded
    assert minimum["events create"] == 14
    assert sum(minimum.values()) == 31


def test_tfjob_manifest_shape():
    job = bench.tfjob_manifest("bench-00001", 1, 4, 1.5)
    specs = job["spec"]["tfReplicaSpecs"]
    assert set(specs) == {"PS", "Worker"}
    assert specs["PS"]["replicas"] == 1
    assert specs["Worker"]["replicas"] == 4
    worker_annotations = specs["Worker"]["template"]["metadata"]["annotations"]
    assert worker_annotations == {bench.RUN_SECONDS_ANNOTATION: "1.5"}
    assert specs["PS"]["template"]["metadata"]["annotations"] == {}
    container = specs["Worker"]["template"]["spec"]["containers"][0]
    assert container["name"] == "tensorflow"


def test_diff_counts_and_grouping():
    before = Counter({("create", "pods"): 2, ("list", "pods"): 1})
    after = Counter({("create", "pods"): 7, ("list", "pods"): 1, ("get", "services"): 1})
    diff = bench.diff_counts(after, before)
    assert diff == Counter({("create", "pods"): 5, ("get", "services"): 1})
    assert list(bench.by_group(diff)) == ["pods create", "services get"]


def test_server_log_counter_counts_only_its_client():
    logger = logging.getLogger(bench.SERVER_LOGGER)
    counter = bench.ServerLogCounter(client="tf-operator").install()
    try:
        line = "%s %s -> %s (%.1f ms) [%s]"
        logger.debug(line, "POST", "/api/v1/namespaces/d/pods", 201, 1.0, "tf-operator/0.5.3")
        logger.debug(line, "GET", "/api/v1/namespaces/d/pods", 200, 1.0, "kubectl/v1.30")
        logger.debug("unrelated %s", "message")
        assert counter.snapshot() == Counter({("create", "pods"): 1})
        assert counter.seen == 2
    finally:
        counter.uninstall()
    assert logger.propagate
