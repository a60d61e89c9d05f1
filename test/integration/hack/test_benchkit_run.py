"""hack/benchkit end to end on a tiny burst: the floor client, the lean lifecycle client and
the real operator against the local cluster, measured through the same code ``make bench``
uses."""

from __future__ import annotations

import pytest

from benchkit import procs, scenarios, workload

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture
def settings(tmp_path):
    return scenarios.Settings(workdir=tmp_path, run_seconds=0.5)


def test_floor_burst_makes_exactly_its_requests(settings):
    result = scenarios.burst(
        settings, procs.floor("full", threads=2), 3, lifecycle=False, budget=120
    )
    assert result["complete"], result
    assert result["pods_seen"] == result["services_seen"] == 15
    assert result["requests_per_job_by_kind"] == {
        "events create": 10.0,
        "pods create": 5.0,
        "services create": 5.0,
        "tfjobs/status update": 1.0,
    }
    assert result["events_stored"] == {"SuccessfulCreatePod": 15, "SuccessfulCreateService": 15}
    assert result["per_job_p50_s"] <= result["per_job_p99_s"] <= result["all_pods_and_services_s"]
    # /proc counts CPU in 10 ms ticks: three jobs of the floor may take less than one.
    assert isinstance(result["cpu_ms_per_job"], float) and result["cpu_ms_per_job"] >= 0


def test_lean_client_goes_through_each_lifecycle_with_the_fewest_requests(settings):
    result = scenarios.burst(settings, procs.lean(threads=2), 2, lifecycle=True, budget=120)
    assert result["complete"], result.get("log_tail")
    assert result["jobs_succeeded"] == 2
    assert result["objects_deleted"] == {"pods": 2, "services": 2}
    minimum = workload.minimum_requests_per_job(settings.ps, settings.workers)
    assert result["requests_per_job_by_kind"] == {k: float(n) for k, n in minimum.items()}
    assert result["conflicts_409"] == 0
    assert result["events_stored"]["TFJobSucceeded"] == 2


def test_operator_burst_measures_a_whole_lifecycle(settings):
    result = scenarios.burst(settings, procs.operator(), 2, lifecycle=True, budget=180)
    assert result["complete"], result.get("log_tail")
    assert result["jobs_succeeded"] == 2
    # the PS pods and services at least (workers still running at success go too)
    assert result["objects_deleted"]["pods"] >= 2
    assert result["objects_deleted"]["services"] >= 2
    assert result["deletes_per_object"] == {"pods": 1.0, "services": 1.0}
    assert result["requests_per_job_by_kind"]["pods create"] == 5.0
    assert sum(result["conflicts_409_by_kind"].values()) == result["conflicts_409"]
    assert result["events_sent"] > 0
    # in 10 ms ticks: the part until all objects exist may round to none, the lifecycle not
    assert result["cpu_ms_per_job"] >= result["cpu_ms_per_job_to_all_objects"] >= 0
    assert result["cpu_ms_per_job"] > 0
    assert result["idle_rss_mib"] > 0 and result["threads"] > 1


def test_thread_cpu_of_an_operator_burst_is_counted_by_kind_of_thread(settings, tmp_path):
    subject = procs.with_thread_cpu(procs.operator(), tmp_path / "threads.json")
    result = scenarios.burst(settings, subject, 2, lifecycle=True, budget=180)
    assert result["complete"], result.get("log_tail")
    by_thread = result["cpu_ms_per_job_by_thread"]
    # the pools' numbered threads are summed under one name
    assert {"job-worker", "create", "informer pods"} <= set(by_thread)
    assert not any(name[-1].isdigit() for name in by_thread)
    assert list(by_thread.values()) == sorted(by_thread.values(), reverse=True)
    assert by_thread["job-worker"] > 0 and by_thread["create"] > 0


def test_steady_load_scrapes_the_workqueue_depth(settings):
    result = scenarios.steady(settings, procs.operator(), rate=2.0, duration=3.0)
    assert result["jobs_with_all_pods"] == result["jobs"] == 6
    assert result["depth_series"], "the operator's /metrics served no workqueue_depth"
    assert result["p99_s"] is not None


def test_batch_scheduler_suite_measures_coscheduling_on_a_small_cluster():
    from benchkit.suites import batchscheduler

    placed = batchscheduler.bench_coscheduling(nodes=2, groups=3, members=2, timeout=60)
    assert (placed["pods"], placed["pods_bound"]) == (6, 6)
    wall, cpu = batchscheduler.deciding_cycles(2, 3, ["1", "16"], cycles=3, coscheduling_beside=2)
    assert len(wall) == len(cpu) == 3 and min(wall) > 0  # the cosched gangs were tried first


def test_floor_and_operator_side_by_side_on_the_real_control_plane(settings):
    from benchkit import realplane
    from localcluster.controlplane.real.build import ControlPlaneUnavailable

    runs = {}
    for kind, subject in (
        ("floor", procs.floor("full", threads=2)),
        ("operator", procs.operator()),
    ):
        try:
            runs[kind] = realplane.burst(settings, subject, 2, budget=120)
        except ControlPlaneUnavailable as err:
            pytest.skip(f"the real control plane cannot be built here: {err}")
    for kind, result in runs.items():
        assert result["complete"], (kind, result.get("log_tail"))
        assert result["kubernetes"].startswith("v1.")
        assert (
            result["per_job_p50_s"] <= result["per_job_p99_s"] <= result["all_pods_and_services_s"]
        )
        # every client's requests: at least the subject's pods, services and the TFJob create
        by_kind = result["apiserver_requests_per_job_by_kind"]
        assert by_kind["pods POST"] == by_kind["pods/binding POST"] == 5.0
        assert result["apiserver_requests_per_job"] >= 11
        assert result["cpu_ms_per_job"] >= result["cpu_ms_per_job_to_all_objects"] >= 0
