"""The monitoring component renders, and each object is valid: core objects against the
Kubernetes schema, the ServiceMonitor and PrometheusRule against prometheus-operator's CRD
schema (v0.80, from the ``cloudcoil-models-prometheus-operator`` models generated from those
CRDs), the Grafana dashboard as Grafana expects it. That the metric names exist is checked
against a running operator in ``test/integration/tools/test_monitoring_metrics.py``."""

from __future__ import annotations

import re
import shutil
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from test.unit.manifests import monitoring_kit as kit

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")

MONITORING_KINDS = ("ServiceMonitor", "PrometheusRule")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> list[dict]:
    return kit.render(tmp_path_factory.mktemp("monitoring"), tmp_path_factory)


def one(objs: list[dict], kind: str) -> dict:
    (obj,) = [o for o in objs if o["kind"] == kind]
    return obj


def strict(schema: Any) -> Any:
    """Forbid unknown fields everywhere, as a CRD's structural schema does (and move Go's
    inline ``(?i)`` flags to the front, where Python's regular expressions want them)."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and "(?i)" in pattern:
            schema["pattern"] = "(?i)" + pattern.replace("(?i)", "")
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@pytest.fixture(scope="module")
def crd_schemas() -> dict[str, dict]:
    models = pytest.importorskip("cloudcoil.models.prometheus_operator.v1")
    return {
        kind: strict(getattr(models, kind).model_json_schema(by_alias=True))
        for kind in MONITORING_KINDS
    }


def test_renders_the_component_beside_the_operator(rendered):
    kinds = sorted(o["kind"] for o in rendered)
    assert kinds.count("ServiceMonitor") == kinds.count("PrometheusRule") == 1
    assert kinds.count("ConfigMap") == 1 and "Deployment" in kinds
    for obj in rendered:
        if obj["kind"] in (*MONITORING_KINDS, "ConfigMap"):
            assert obj["metadata"]["namespace"] == "kubeflow"


@pytest.mark.parametrize("version", ["1.32.0", kubernetes_validate.latest_version()])
def test_core_objects_validate(rendered, version):
    for obj in rendered:
        if obj["kind"] not in MONITORING_KINDS:
            kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("kind", MONITORING_KINDS)
def test_prometheus_operator_objects_match_the_crd_schema(rendered, crd_schemas, kind):
    obj = one(rendered, kind)
    jsonschema.validate(obj, crd_schemas[kind])
    broken = {**obj, "spec": {**obj["spec"], "no_such_field": 1}}
    with pytest.raises(jsonschema.ValidationError):  # the check does look at the spec
        jsonschema.validate(broken, crd_schemas[kind])


def test_service_monitor_scrapes_the_operator_service(rendered):
    monitor, service = one(rendered, "ServiceMonitor"), one(rendered, "Service")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]
    (endpoint,) = monitor["spec"]["endpoints"]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert endpoint["port"] in ports and endpoint["path"] == "/metrics"
    # the alerts' job label is the Service's name (the ServiceMonitor sets no jobLabel)
    assert "jobLabel" not in monitor["spec"]
    for rule in kit.alert_rules():
        if 'job="' in rule["expr"]:
            assert f'job="{service["metadata"]["name"]}"' in rule["expr"]


def test_alerts_are_complete():
    rules = kit.alert_rules()
    names = [r["alert"] for r in rules]
    assert len(names) == len(set(names))
    for wanted in ("TFOperatorDown", "TFOperatorReconcileErrors", "TFOperatorWorkqueueDepthHigh",
                   "TFOperatorWorkqueueLatencyHigh", "TFJobsFailing"):  # fmt: skip
        assert wanted in names
    for rule in rules:
        assert rule["labels"]["severity"] in ("critical", "warning", "info")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        assert rule["for"].endswith("m")
        assert rule["expr"].count("(") == rule["expr"].count(")")
        assert kit.metric_names(rule["expr"]), rule["alert"]


def test_alert_texts_name_only_labels_their_expression_keeps():
    """A summary's ``{{ $labels.x }}`` is filled only when every ``sum by`` / ``max by`` of the
    expression keeps ``x`` (the queue ``name`` of each kind, the job ``framework``)."""
    templated = 0
    for rule in kit.alert_rules():
        used = set(re.findall(r"\$labels\.(\w+)", " ".join(rule["annotations"].values())))
        for grouping in re.findall(r"\bby\s*\(([^)]*)\)", rule["expr"]):
            kept = {label.strip() for label in grouping.split(",")}
            assert used <= kept, f"{rule['alert']}: {used - kept} not kept by by ({grouping})"
        templated += bool(used)
    assert templated >= 6  # the work-queue alerts by queue, the job alerts by framework


def test_grafana_dashboard_is_well_formed(rendered):
    config_map = one(rendered, "ConfigMap")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    board = kit.dashboard()
    assert config_map["data"]["tf-operator-dashboard.json"].strip() == (
        (kit.COMPONENT / "tf-operator-dashboard.json").read_text().strip()
    )
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)) and board["uid"] == "tf-operator"
    variables = {v["name"] for v in board["templating"]["list"]}
    assert {"datasource", "job"} <= variables
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}"
        assert panel["targets"] and all(t["expr"] for t in panel["targets"])
        assert {"x", "y", "w", "h"} <= panel["gridPos"].keys()
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for target in panel["targets"]:
            assert 'job="$job"' in target["expr"], target["expr"]


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('absent(up{job="x"} == 1)', {"up"}),
        (
            'histogram_quantile(0.99, sum by (name, le) (rate(a_bucket{j="$job"}[5m]))) > 5',
            {"a_bucket"},
        ),
        ("sum(increase(b[1h])) / (sum(increase(b[1h])) + c) > 0.5 and on(x) d", {"b", "c", "d"}),
        ("rate(e[$__rate_interval]) * 60", {"e"}),
        ("label_values(tf_operator_is_leader, job)", {"tf_operator_is_leader"}),
    ],
)
def test_metric_names_from_promql(expr, names):
    assert kit.metric_names(expr) == names
