"""Workqueue metrics through the prometheus provider, with a fake clock."""

import pytest
from prometheus_client import CollectorRegistry, Gauge

from support.fake_clock import FakeClock
from tf_operator.k8s.workqueue import DelayingQueue, Queue
from tf_operator.k8s.workqueue.metrics import MetricsProvider, new_queue_metrics
from tf_operator.k8s.workqueue.prometheus_metrics import PrometheusMetricsProvider


@pytest.fixture
def registry():
    return CollectorRegistry()


def value(registry, metric, name, **labels):
    return registry.get_sample_value(metric, {"name": name, **labels})


def test_queue_metrics_follow_adds_gets_and_done(registry):
    clock = FakeClock()
    q = Queue("jobs", clock=clock, metrics_provider=PrometheusMetricsProvider(registry))
    q.add("a")
    q.add("b")
    q.add("a")  # dedup: not counted
    assert value(registry, "workqueue_depth", "jobs") == 2
    assert value(registry, "workqueue_adds_total", "jobs") == 2
    clock.step(2)
    item, _ = q.get()
    assert value(registry, "workqueue_depth", "jobs") == 1
    assert value(registry, "workqueue_queue_duration_seconds_sum", "jobs") == 2
    assert value(registry, "workqueue_queue_duration_seconds_count", "jobs") == 1
    clock.step(3)
    assert value(registry, "workqueue_unfinished_work_seconds", "jobs") == 3
    assert value(registry, "workqueue_longest_running_processor_seconds", "jobs") == 3
    q.done(item)
    assert value(registry, "workqueue_work_duration_seconds_sum", "jobs") == 3
    assert value(registry, "workqueue_unfinished_work_seconds", "jobs") == 0
    assert value(registry, "workqueue_longest_running_processor_seconds", "jobs") == 0


def test_retries_counted_by_delaying_queue(registry):
    q = DelayingQueue(
        "retry", clock=FakeClock(), metrics_provider=PrometheusMetricsProvider(registry)
    )
    q.add_after("a", 0)
    q.add_after("b", 5)
    assert value(registry, "workqueue_retries_total", "retry") == 2
    q.shut_down()


def test_many_queues_and_providers_register_families_once(registry):
    queues = [
        Queue(f"q{i}", metrics_provider=PrometheusMetricsProvider(registry)) for i in range(3)
    ]
    queues.append(Queue("q0", metrics_provider=PrometheusMetricsProvider(registry)))
    for q in queues:
        q.add("x")
    assert value(registry, "workqueue_adds_total", "q0") == 2
    assert value(registry, "workqueue_adds_total", "q2") == 1


def test_reuses_family_registered_by_someone_else():
    registry = CollectorRegistry()
    Gauge("workqueue_depth", "pre-existing", ["name"], registry=registry)
    q = Queue("z", metrics_provider=PrometheusMetricsProvider(registry))
    q.add("a")
    assert value(registry, "workqueue_depth", "z") == 1


def test_unnamed_queue_or_noop_provider_has_no_metrics_object(monkeypatch):
    from tf_operator.k8s.workqueue import metrics as metrics_module

    # the process-wide provider may have been set by an earlier test that ran the server
    monkeypatch.setattr(metrics_module, "_provider", metrics_module.NOOP_PROVIDER)
    assert new_queue_metrics("", PrometheusMetricsProvider(CollectorRegistry()), None) is None
    assert new_queue_metrics("named", MetricsProvider(), None) is None
    assert Queue("named")._metrics is None  # default provider is the no-op one


def test_enable_prometheus_metrics_installs_provider_once(monkeypatch):
    from tf_operator.k8s.workqueue import metrics as metrics_module
    from tf_operator.k8s.workqueue.prometheus_metrics import enable_prometheus_metrics

    monkeypatch.setattr(metrics_module, "_provider", metrics_module.NOOP_PROVIDER)
    monkeypatch.setattr(metrics_module, "_provider_set", False)
    registry = CollectorRegistry()
    enable_prometheus_metrics(registry)
    enable_prometheus_metrics(CollectorRegistry())  # ignored: the first provider stays
    Queue("global").add("a")
    assert value(registry, "workqueue_adds_total", "global") == 1
