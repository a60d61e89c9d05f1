"""Server options: Go duration parsing and formatting, v0.5.3 defaults, validation."""

import pytest

from tf_operator.app.options import ServerOption, format_go_duration, parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("12h", 43200.0),
        ("1m30s", 90.0),
        ("1h30m", 5400.0),
        ("300ms", 0.3),
        ("1.5h", 5400.0),
        ("2h45m0.5s", 9900.5),
        ("0", 0.0),
        ("-1m", -60.0),
        ("+5s", 5.0),
        ("10us", 1e-5),
        ("100ns", 1e-7),
    ],
)
def test_parse_go_duration(text, seconds):
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "30", "1x", "h", "s30", "1h 30m", "-", "1.2.3s"])
def test_parse_go_duration_rejects_what_go_rejects(text):
    with pytest.raises(ValueError):
        parse_go_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (43200.0, "12h0m0s"),
        (90.0, "1m30s"),
        (15.0, "15s"),
        (0.5, "500ms"),
        (0, "0s"),
        (3600.5, "1h0m0.5s"),
    ],
)
def test_format_go_duration(seconds, text):
    assert format_go_duration(seconds) == text
    assert parse_go_duration(text) == pytest.approx(seconds)


def test_defaults_match_v053_but_leader_election_timing():
    opt = ServerOption()
    assert opt.namespace == ""
    assert opt.threadiness == 1
    assert opt.json_log_format is True
    assert opt.enable_gang_scheduling is False
    assert opt.monitoring_port == 8443
    assert opt.resync_period == 12 * 3600
    # v0.5.3: 15 s, 5 s, 3 s (divergence D43)
    assert (opt.lease_duration, opt.renew_deadline, opt.retry_period) == (15, 10, 2)
    assert opt.lock_name == "tf-operator"
    assert opt.validate() == []


def test_validate_reports_bad_settings():
    opt = ServerOption(threadiness=0, gang_scheduler_name="-yunikorn", renew_deadline=20)
    problems = " ".join(opt.validate())
    assert "threadiness" in problems
    assert "gang-scheduler-name" in problems
    assert "lease duration > renew deadline" in problems
    assert ServerOption(leader_elect=False, renew_deadline=20).validate() == []


@pytest.mark.parametrize(
    "name",
    ["kube-batch", "volcano", "scheduler-plugins", "scheduler-plugins-scheduler", "yunikorn"],
)
def test_any_scheduler_name_is_a_gang_scheduler(name):
    """kube-batch, volcano, scheduler-plugins, and any other name as a scheduler-plugins
    profile, as training-operator v1.9 takes it (D75)."""
    assert ServerOption(gang_scheduler_name=name).validate() == []


def test_the_lease_must_outlast_a_term():
    """The leader leads until renew deadline + retry period after its last renewal began; a
    standby may take over one lease duration after reading it (D66)."""
    problems = ServerOption(lease_duration=12, renew_deadline=10, retry_period=2).validate()
    assert problems == ["leader election needs lease duration > renew deadline + retry period"]
    assert ServerOption(lease_duration=12.5, renew_deadline=10, retry_period=2).validate() == []


def test_the_migration_lock_is_offered():
    assert ServerOption(lock_type="endpointsleases").validate() == []
    assert ServerOption(lock_type="configmaps").validate() != []
