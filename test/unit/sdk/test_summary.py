"""How a TFJob is summarised for people (``tf_operator.sdk.summary``)."""

from tf_operator.sdk.summary import human_duration


def test_human_duration_like_kubectl():
    assert [
        human_duration(s) for s in (0, 59, 119, 192, 3600, 3 * 3600 + 300, 90000, 3 * 86400 + 7200)
    ] == [
        "0s",
        "59s",
        "119s",
        "3m12s",
        "60m",
        "3h5m",
        "25h",
        "3d2h",
    ]


def test_a_suspended_job_has_no_running_duration():
    from datetime import UTC, datetime

    from tf_operator.sdk.summary import duration

    now = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
    running = {"status": {"startTime": "2026-01-01T12:00:00Z", "conditions": []}}
    assert duration(running, now) == "30s"
    suspended = {"status": {**running["status"], "conditions": [
        {"type": "Suspended", "status": "True"}]}}  # fmt: skip
    assert duration(suspended, now) == ""
