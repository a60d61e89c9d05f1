"""Markers follow folders: everything under ``test/integration`` is marked ``integration``
(it starts servers, clusters or processes), and a test under ``test/unit`` that asks for the
marker is a collection error, so ``-m "not integration"`` and ``test/unit`` mean the same.
Local clusters check their shared stored objects for mutation while the tests run. A test
marked ``emulator_only(reason=...)`` whose parametrised fixtures chose the real control plane
(id ``real``) is skipped with that reason."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from pathlib import Path

import pytest

# Every local cluster a test starts (in process or as a process of its own, which inherits
# this) checks that no component mutates the stored objects it shares (localcluster.controlplane.emulated
# .store); the benchmarks and demos run without the check.
os.environ.setdefault("LOCALCLUSTER_CHECK_SHARED", "1")

TEST_ROOT = Path(__file__).resolve().parent
INTEGRATION = TEST_ROOT / "integration"
UNIT = TEST_ROOT / "unit"


def _runs_on_real_control_plane(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "real" in callspec.params.values()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    misplaced = []
    for item in items:
        only = item.get_closest_marker("emulator_only")
        if only is not None and _runs_on_real_control_plane(item):
            reason = only.kwargs.get("reason") or (only.args[0] if only.args else "")
            item.add_marker(pytest.mark.skip(reason=f"emulated control plane only: {reason}"))
        path = Path(str(item.path)).resolve()
        if path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.integration)
        elif path.is_relative_to(UNIT) and item.get_closest_marker("integration") is not None:
            misplaced.append(item.nodeid)
    if misplaced:
        raise pytest.UsageError(
            "integration tests must live under test/integration (they start servers, clusters "
            "or processes): " + ", ".join(misplaced)
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test's report carries the log tail of every operator process it left running
    (a wait that timed out says what, the operator's log says why)."""
    report = yield
    if call.when == "call" and report.failed:
        from support.operator_process import RUNNING

        for number, operator in enumerate(list(RUNNING)):
            with contextlib.suppress(OSError):
                report.sections.append(
                    (
                        f"operator {number} log (last lines, {operator.log_path})",
                        operator.log_tail(),
                    )
                )
    return report
