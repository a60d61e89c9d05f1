"""A kubeconfig that cannot be used is one line and exit 1 from ``tfjob`` and the dashboard, as
from kubectl and the operator (issue 27, Low): they printed a Python traceback."""

import pytest
from click.testing import CliRunner

from tf_operator.cli.main import cli
from tf_operator.dashboard.main import main as dashboard

BROKEN = {
    "not-yaml": "not: [valid",
    "not-a-mapping": "- a list",
    "clusters-not-a-list": "clusters: 5",
    "entry-not-a-mapping": "clusters: [{name: c, cluster: 5}]",
    "context-a-number": "current-context: 7",
    "no-server": (
        "clusters: [{name: c, cluster: {}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "current-context: c\n"
    ),
}


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN.keys())
@pytest.mark.parametrize("command", ["tfjob", "dashboard"])
def test_a_broken_kubeconfig_is_one_line(tmp_path, content, command):
    path = tmp_path / "config"
    path.write_text(content)
    if command == "tfjob":
        result = CliRunner().invoke(cli, ["--kubeconfig", str(path), "list"])
    else:
        result = CliRunner().invoke(dashboard, ["--kubeconfig", str(path), "--port", "0"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "kubeconfig" in lines[0] or "server" in lines[0]
