"""The tf-operator command line: Go-style flags, defaults of v0.5.3, usage errors, --version."""

import pytest
from click.testing import CliRunner

from tf_operator.app import main as app_main
from tf_operator.app import server


@pytest.fixture
def captured_options(monkeypatch):
    seen = []

    def fake_run(opt):
        seen.append(opt)
        return 0

    monkeypatch.setattr(server, "run", fake_run)
    monkeypatch.setattr(app_main, "_exit_now", lambda code: seen.append(code))
    return seen


def _invoke(args):
    return CliRunner().invoke(app_main.cli, app_main.normalize_go_args(args))


def test_defaults(captured_options):
    result = _invoke([])
    assert result.exit_code == 0, result.output
    opt, code = captured_options
    assert code == 0
    assert opt.master == "" and opt.kubeconfig == "" and opt.namespace == ""
    assert opt.threadiness == 1
    assert opt.json_log_format is True
    assert opt.enable_gang_scheduling is False
    assert opt.gang_scheduler_name == "kube-batch"
    assert opt.monitoring_port == 8443
    assert opt.resync_period == 43200.0
    assert opt.leader_elect is True
    assert opt.lock_type == "endpoints" and opt.lock_name == "tf-operator"
    assert opt.enable_scheme == ("tfjob",)  # v0.5.3's operator: TFJobs only (D80)


def test_enable_scheme_is_repeatable_in_any_case_and_counts_each_kind_once(captured_options):
    result = _invoke(["--enable-scheme=TFJob", "-enable-scheme", "tfjob"])
    assert result.exit_code == 0, result.output
    assert captured_options[0].enable_scheme == ("tfjob",)


def test_go_style_flags(captured_options):
    result = _invoke(
        [
            "-master=http://127.0.0.1:1",
            "--namespace",
            "kubeflow",
            "-threadiness=4",
            "--json-log-format=false",
            "--enable-gang-scheduling=true",
            "--gang-scheduler-name=volcano",
            "-monitoring-port",
            "9999",
            "--resyc-period=1m30s",
            "--leader-elect=0",
            "--logtostderr=true",
            "--v=4",
        ]
    )
    assert result.exit_code == 0, result.output
    opt = captured_options[0]
    assert opt.master == "http://127.0.0.1:1"
    assert opt.namespace == "kubeflow"
    assert opt.threadiness == 4
    assert opt.json_log_format is False
    assert opt.enable_gang_scheduling is True
    assert opt.gang_scheduler_name == "volcano"
    assert opt.monitoring_port == 9999
    assert opt.resync_period == 90.0
    assert opt.leader_elect is False
    assert opt.log_verbosity == 4


def test_resync_alias_and_click_negations(captured_options):
    result = _invoke(["--resync-period", "30s", "--no-json-log-format", "--no-leader-elect"])
    assert result.exit_code == 0, result.output
    opt = captured_options[0]
    assert (opt.resync_period, opt.json_log_format, opt.leader_elect) == (30.0, False, False)


def test_leader_election_tuning(captured_options):
    result = _invoke(
        [
            "--leader-elect-lease-duration=4s",
            "--leader-elect-renew-deadline=2s",
            "--leader-elect-retry-period=500ms",
            "--leader-elect-resource-lock=leases",
            "--leader-elect-resource-name=other",
        ]
    )
    assert result.exit_code == 0, result.output
    opt = captured_options[0]
    assert (opt.lease_duration, opt.renew_deadline, opt.retry_period) == (4.0, 2.0, 0.5)
    assert (opt.lock_type, opt.lock_name) == ("leases", "other")


@pytest.mark.parametrize(
    "args",
    [
        ["--resyc-period=30"],
        ["--threadiness=0"],
        ["--gang-scheduler-name=Yuni Korn"],
        ["--bogus"],
        ["--enable-scheme=mpijob"],
    ],
)
def test_bad_flags_are_usage_errors(captured_options, args):
    result = _invoke(args)
    assert result.exit_code == 2
    assert captured_options == []


def test_inconsistent_leader_timings_rejected(captured_options):
    result = _invoke(["--leader-elect-renew-deadline=20s"])
    assert result.exit_code == 2
    assert "renew deadline" in result.output


def test_version_prints_and_exits_without_running(captured_options):
    result = _invoke(["--version"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "API Version: v1"
    assert lines[1].startswith("Version: ")
    assert lines[2].startswith("Git SHA: ")
    assert captured_options == []


def test_bad_go_boolean_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        app_main.main(["--json-log-format=maybe"])
    assert exc.value.code == 2
    assert "invalid boolean value" in capsys.readouterr().err


def test_normalize_keeps_values_and_separator():
    assert app_main.normalize_go_args(["--namespace", "-x", "--", "-master=1"]) == [
        "--namespace",
        "-x",
        "--",
        "-master=1",
    ]
    assert app_main.normalize_go_args(["-version"]) == ["--version"]


def test_help_lists_the_readme_flags_table():
    """Every visible flag of ``--help`` has a row in the README's flags table and every row
    names a real flag (the flags are declared once, in ``options.py``)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    table = readme.split("### Flags", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    documented = set(re.findall(r"`(--[a-z-]+)", table))
    documented |= {f"--leader-elect{s}" for s in re.findall(r"`(-(?!-)[a-z-]+)`", table)}
    usage = _invoke(["--help"]).output
    shown = set(re.findall(r"^\s+(?:-h, )?(--[a-z-]+)", usage, re.M))
    shown |= set(re.findall(r", (--[a-z-]+)", usage))
    assert shown - {"--help"} == documented
