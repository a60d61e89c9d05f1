"""OperatorProcess: waits end early, with the log, when the binary exits."""

import pytest

from support.operator_process import OperatorExited, OperatorProcess


@pytest.mark.integration
def test_wait_log_reports_an_early_exit(tmp_path):
    missing = tmp_path / "no-such-kubeconfig"
    op = OperatorProcess(str(missing), tmp_path / "op.log", ["--no-leader-elect"])
    try:
        with pytest.raises(OperatorExited, match="operator exited 1"):
            op.wait_log("this line never appears", timeout=60)
        assert not op.alive()
    finally:
        op.stop()


@pytest.mark.integration
def test_version_is_logged_and_stop_is_idempotent(tmp_path):
    op = OperatorProcess("unused", tmp_path / "op.log", ["--version"])
    try:
        assert op.wait_exit(60) == 0
    finally:
        op.stop()
        op.stop()
    assert op.text().strip()
