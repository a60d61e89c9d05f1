"""Metric names and help texts exactly as v0.5.3 exposed them (no ``_total`` suffix)."""

from prometheus_client import CollectorRegistry, generate_latest

from tf_operator.controller.v1.tensorflow import metrics
from tf_operator.metrics import LegacyCollector, LegacyCounter


def test_legacy_names_and_help():
    registry = CollectorRegistry()
    registry.register(LegacyCollector(metrics.ALL_COUNTERS))
    text = generate_latest(registry).decode()
    for name, help_text in (
        ("tf_operator_jobs_created", "Counts number of TF jobs created"),
        ("tf_operator_jobs_deleted", "Counts number of TF jobs deleted"),
        ("tf_operator_jobs_successful", "Counts number of TF jobs successful"),
        ("tf_operator_jobs_failed", "Counts number of TF jobs failed"),
        ("tf_operator_jobs_restarted", "Counts number of TF jobs restarted"),
    ):
        assert f"# HELP {name} {help_text}\n" in text
        assert f"\n{name} " in text
    assert "_total" not in text


def test_counter_increments():
    counter = LegacyCounter("x", "y")
    counter.inc()
    counter.inc(2)
    assert counter.get() == 3
