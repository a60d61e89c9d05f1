"""The TFJob CRD's schema is structural, accepts the examples and rejects bad specs.

`validate` is a small OpenAPI v3 (structural subset) validator in the spirit of the API
server's: types, enums, bounds, required, nullable, and unknown fields reported as errors the
way ``fieldValidation=Strict`` (kubectl's default) reports them.
"""

import copy
from datetime import datetime
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CRD = ROOT / "manifests/base/crd.yaml"
EXAMPLES = sorted(p for d in ("v1", "v1beta2") for p in (ROOT / "examples" / d).rglob("*.yaml"))
_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
}


def validate(value, schema, path="") -> list[str]:
    if value is None:
        return [] if schema.get("nullable") else [f"{path}: must not be null"]
    kind = schema.get("type")
    if kind and (
        not isinstance(value, _TYPES[kind]) or (kind in ("integer", "number") and value is True)
    ):
        return [f"{path}: must be of type {kind}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: unsupported value {value!r}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: must be >= {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: must be <= {schema['maximum']}")
    if schema.get("format") == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            errors.append(f"{path}: not a date-time")
    if kind == "object":
        errors += [
            f"{path}.{key}: Required value"
            for key in schema.get("required", [])
            if key not in value
        ]
        props = schema.get("properties")
        for key, item in value.items():
            if props is not None and key in props:
                errors += validate(item, props[key], f"{path}.{key}")
            elif "additionalProperties" in schema:
                errors += validate(item, schema["additionalProperties"], f"{path}.{key}")
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != ".metadata":
                errors.append(f"{path}: unknown field {key!r}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], f"{path}[{i}]")
    return errors


def structural_problems(schema, path="", under_preserve=False) -> list[str]:
    problems = []
    preserve = under_preserve or schema.get("x-kubernetes-preserve-unknown-fields", False)
    if "type" not in schema and not preserve and "x-kubernetes-int-or-string" not in schema:
        problems.append(f"{path}: no type")
    if "properties" in schema and "additionalProperties" in schema:
        problems.append(f"{path}: properties and additionalProperties together")
    for key, sub in (schema.get("properties") or {}).items():
        problems += structural_problems(sub, f"{path}.{key}", preserve)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            problems += structural_problems(schema[key], f"{path}[{key}]", preserve)
    return problems


def preserved_paths(schema, path="") -> list[str]:
    found = [path] if schema.get("x-kubernetes-preserve-unknown-fields") else []
    for key, sub in (schema.get("properties") or {}).items():
        found += preserved_paths(sub, f"{path}.{key}")
    return found


@pytest.fixture(scope="module")
def crd():
    return yaml.safe_load(CRD.read_text())


@pytest.fixture(scope="module")
def schema(crd):
    v1, _ = crd["spec"]["versions"]
    return v1["schema"]["openAPIV3Schema"]


def tfjob_examples():
    for path in EXAMPLES:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "TFJob":
                yield pytest.param(doc, id=str(path.relative_to(ROOT)))


def other_examples():
    for path in EXAMPLES:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") != "TFJob":
                yield pytest.param(doc, id=str(path.relative_to(ROOT)))


def test_crd_identity(crd):
    kubernetes_validate.validate(crd, "1.32.0", strict=True)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "tfjobs.kubeflow.org"
    assert spec["scope"] == "Namespaced"
    assert spec["names"]["kind"] == "TFJob" and spec["names"]["plural"] == "tfjobs"
    assert spec["names"]["singular"] == "tfjob"
    v1, v1beta2 = spec["versions"]
    assert v1["name"] == "v1" and v1["served"] and v1["storage"]
    assert v1["subresources"] == {"status": {}}
    columns = {c["name"]: c["jsonPath"] for c in v1["additionalPrinterColumns"]}
    assert columns == {
        "State": ".status.conditions[-1:].type",
        "Age": ".metadata.creationTimestamp",
    }
    # v0.5.3 served v1beta2 beside v1 with the same types: same schema, conversion None
    assert v1beta2["name"] == "v1beta2" and v1beta2["served"] and not v1beta2["storage"]
    assert {k: v for k, v in v1beta2.items() if k not in ("name", "storage")} == {
        k: v for k, v in v1.items() if k not in ("name", "storage")
    }
    assert spec.get("conversion", {"strategy": "None"}) == {"strategy": "None"}


def test_schema_is_structural_and_preserves_only_pod_templates(schema):
    assert structural_problems(schema) == []
    replica_spec = schema["properties"]["spec"]["properties"]["tfReplicaSpecs"][
        "additionalProperties"
    ]
    preserved = preserved_paths(replica_spec)
    assert preserved and all(p.startswith(".template") for p in preserved)
    assert preserved_paths(schema) == []  # nothing outside the replica templates


def test_replica_type_keys_are_not_pinned_so_nothing_is_pruned(schema):
    # issue 13 #8: keys in any case must survive clients that do not ask for strict validation
    replica_specs = schema["properties"]["spec"]["properties"]["tfReplicaSpecs"]
    assert "properties" not in replica_specs
    assert replica_specs["maxProperties"] == 5
    rules = " ".join(r["rule"] for r in replica_specs["x-kubernetes-validations"])
    for kind in ("ps", "worker", "chief", "master", "evaluator"):
        assert f"'{kind}'" in rules


@pytest.mark.parametrize("job", list(tfjob_examples()))
def test_examples_are_accepted(schema, job):
    assert validate(job, schema) == []


@pytest.mark.parametrize("obj", list(other_examples()))
def test_other_example_objects_validate(obj):
    kubernetes_validate.validate(obj, "1.32.0", strict=True)


def _job():
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "x"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "ExitCode",
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}},
                }
            }
        },
    }


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (
            lambda s: s["tfReplicaSpecs"]["Worker"].update(restartPolicy="Sometimes"),
            "unsupported value",
        ),
        (lambda s: s.update(cleanPodPolicy="Some"), "unsupported value"),
        (lambda s: s["tfReplicaSpecs"]["Worker"].update(replicas=1001), "must be <= 1000"),
        (lambda s: s["tfReplicaSpecs"]["Worker"].update(replicas=-1), "must be >= 0"),
        (lambda s: s["tfReplicaSpecs"]["Worker"].update(replicas="2"), "type integer"),
        (lambda s: s.pop("tfReplicaSpecs"), "Required value"),
        (lambda s: s.update(backoffLimit=1.5), "type integer"),
        (lambda s: s.update(backoffLimit=-1), "must be >= 0"),
        (lambda s: s.update(activeDeadlineSeconds=-1), "must be >= 0"),
        (lambda s: s.update(ttlSecondsAfterFinished=-1), "must be >= 0"),
        (
            lambda s: s.update(runPolicy={"schedulingPolicy": {"minAvailable": 2**31}}),
            "must be <= 2147483647",
        ),
        (
            lambda s: s.update(runPolicy={"schedulingPolicy": {"scheduleTimeoutSeconds": 0}}),
            "must be >= 1",  # D150
        ),
    ],
)
def test_bad_specs_are_rejected(schema, mutate, error):
    job = _job()
    mutate(job["spec"])
    errors = validate(job, schema)
    assert any(error in e for e in errors), errors


def test_an_empty_restart_policy_is_unset(schema):
    # the operator reads "" as unset and defaults it, as v0.5.3 and v1.9 did: admitted
    job = _job()
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = ""
    assert validate(job, schema) == []


def test_status_as_the_operator_writes_it(schema):
    job = _job()
    job["status"] = {"conditions": None, "replicaStatuses": None}
    assert validate(job, schema) == []
    job["status"] = {
        "conditions": [
            {
                "type": "Succeeded",
                "status": "True",
                "reason": "TFJobSucceeded",
                "message": "TFJob x successfully completed.",
                "lastUpdateTime": "2019-07-01T12:00:00Z",
                "lastTransitionTime": "2019-07-01T12:00:00Z",
            }
        ],
        "replicaStatuses": {"Worker": {"succeeded": 2}, "PS": {}},
        "startTime": "2019-07-01T11:59:00Z",
        "completionTime": "2019-07-01T12:00:00Z",
    }
    assert validate(job, schema) == []
    bad = copy.deepcopy(job)
    bad["status"]["conditions"][0]["type"] = "Done"
    assert validate(bad, schema)
