"""Every metric the monitoring kit queries is one a running operator really serves.

The session's ``tf-operator`` (against the local cluster) runs a job first, so the work queue
and the job counters have samples; then its ``/metrics`` is scraped and parsed, and each metric
name in the alerts and in the Grafana panels must be among the served sample names (``up`` is
Prometheus's own)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from test.integration.tools.conftest import python_job, unique
from test.unit.manifests import monitoring_kit as kit
from tf_operator.sdk import TFJobClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def served(cluster, operator) -> set[str]:
    name = unique("metrics")
    with TFJobClient(cluster.kubeconfig, namespace="default") as client:
        client.create(python_job(name, "pass"))
        client.wait_for_job(name, timeout=60)
    code, text = operator.http("/metrics")
    assert code == 200
    return {s.name for family in text_string_to_metric_families(text) for s in family.samples}


def test_alert_expressions_use_served_metrics(served):
    for rule in kit.alert_rules():
        missing = kit.metric_names(rule["expr"]) - served - kit.SYNTHETIC
        assert not missing, f"alert {rule['alert']} queries metrics not served: {missing}"


def test_dashboard_panels_use_served_metrics(served):
    board = kit.dashboard()
    used = set()
    for query in kit.dashboard_queries(board):
        names = kit.metric_names(query)
        assert names, query
        assert not names - served - kit.SYNTHETIC, f"{query}: {names - served}"
        used |= names
    # the panels cover the operator's own metrics and the work queue, not only the process
    assert {
        "training_operator_jobs_failed_total",
        "tf_operator_is_leader",
        "workqueue_depth",
    } <= used
    assert "workqueue_queue_duration_seconds_bucket" in used
