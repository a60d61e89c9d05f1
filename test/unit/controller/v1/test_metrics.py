"""Job counters per kind: v1.9's family labelled by framework for every kind, v0.5.3's for
TFJob (D82)."""

from prometheus_client import CollectorRegistry, generate_latest

from tf_operator.controller.v1.metrics import ALL_FAMILIES, framework_metrics
from tf_operator.metrics import LegacyCollector, LegacyCounter


def test_v1_9_names_labels_and_help():
    registry = CollectorRegistry()
    for family in ALL_FAMILIES:
        registry.register(family)
    metrics = framework_metrics("unit-test-framework")
    metrics.successful.inc()
    text = generate_latest(registry).decode()
    for what in ("created", "deleted", "successful", "failed", "restarted"):
        assert f"# HELP training_operator_jobs_{what}_total Counts number of jobs {what}\n" in text
        assert f"# TYPE training_operator_jobs_{what}_total counter\n" in text
    assert 'training_operator_jobs_successful_total{framework="unit-test-framework"} 1.0' in text
    assert 'training_operator_jobs_failed_total{framework="unit-test-framework"} 0.0' in text
    assert "_created{" not in text  # no creation-time samples, as the Go client


def test_a_kind_with_legacy_counters_counts_both():
    legacy = tuple(LegacyCounter(f"legacy_{i}", "x") for i in range(5))
    metrics = framework_metrics("unit-test-both", legacy)
    metrics.created.inc()
    metrics.restarted.inc(2)
    assert [c.get() for c in legacy] == [1, 0, 0, 0, 2]
    family = {f.name: f for f in ALL_FAMILIES}
    assert family["training_operator_jobs_created"].labels("unit-test-both").get() == 1
    registry = CollectorRegistry()
    registry.register(LegacyCollector(legacy))
    assert "legacy_4 2.0" in generate_latest(registry).decode()
