"""The monitoring kit as tests see it: rendered objects, its PromQL, and the metric names used.

``render`` builds a throw-away kustomization (standalone overlay + the monitoring component)
and renders it with the real ``kubectl kustomize``. ``metric_names`` pulls the metric names out
of a PromQL expression: label matchers, range durations, grouping clauses, strings and Grafana
variables are removed, and what is left that is neither a function call nor a keyword is a
metric name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "manifests"
COMPONENT = MANIFESTS / "components" / "monitoring"
# Made by Prometheus for every target, not served by the operator.
SYNTHETIC = {"up"}

_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "inf", "nan",
}  # fmt: skip
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")


def render(workdir: Path, tmp_path_factory) -> list[dict]:
    """The standalone overlay plus the monitoring component, rendered by kubectl."""
    from test.unit.manifests.test_manifests import render as render_kustomization

    rel = os.path.relpath(MANIFESTS, workdir)  # kustomize refuses absolute paths
    (workdir / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [f"{rel}/overlays/standalone"],
                "components": [f"{rel}/components/monitoring"],
            }
        )
    )
    return render_kustomization(workdir, tmp_path_factory)


def alert_rules() -> list[dict]:
    rule = yaml.safe_load((COMPONENT / "prometheusrule.yaml").read_text())
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def dashboard() -> dict:
    return json.loads((COMPONENT / "tf-operator-dashboard.json").read_text())


def dashboard_queries(board: dict) -> list[str]:
    queries = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            queries.append(var["query"]["query"])
    return queries


def metric_names(expr: str) -> set[str]:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range and subquery durations
    text = re.sub(r"\$\{?\w+\}?", "", text)  # Grafana variables
    text = _GROUPING.sub("", text)
    text = re.sub(r"label_values\(\s*(\w+)\s*,\s*\w+\s*\)", r"\1", text)  # Grafana helper
    names = set()
    for match in re.finditer(r"(?<![\w:.])[A-Za-z_:][\w:]*", text):  # not inside 1e-3
        word = match.group(0)
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or word.lower() in _KEYWORDS:
            continue
        names.add(word)
    return names
