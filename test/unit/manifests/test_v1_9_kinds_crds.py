"""The shipped XGBoostJob, JAXJob and PaddleJob CRDs on the local cluster's API server: their
schemas and CEL rules refuse at admission what training-operator v1.9's webhooks refuse (the
cases of their test tables), with v1.9's field paths, keep everything a v1.9 user writes, and
serve v1.9's printer columns and scale subresources."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from localcluster.controlplane.emulated import Registry, StatusError
from support.crd import JAX_CRD_FILE, PADDLE_CRD_FILE, XGBOOST_CRD_FILE, install_crds
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.controller.v1.jax.kind import JAXJOB_KIND
from tf_operator.controller.v1.paddle.kind import PADDLEJOB_KIND
from tf_operator.controller.v1.xgboost.kind import XGBOOSTJOB_KIND

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
ROOT = Path(__file__).resolve().parents[3]
_names = iter(range(10**6))


@dataclass(frozen=True)
class Kind:
    name: str
    plural: str
    field: str
    container: str
    types: dict[str, int]  # a valid job's replica types and counts
    crd: Path
    scale: bool

    def __str__(self) -> str:
        return self.name

    @property
    def resource(self) -> tuple[str, str, str]:
        return ("kubeflow.org", "v1", self.plural)

    def replica(self, replicas: int = 1, container: str | None = None, image: str = "i") -> dict:
        name = self.container if container is None else container
        return {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": name, "image": image}]}},
        }

    def job(self, name: str | None = None, **spec: object) -> dict:
        spec.setdefault(self.field, {t: self.replica(n) for t, n in self.types.items()})
        return {
            "apiVersion": "kubeflow.org/v1",
            "kind": self.name,
            "metadata": {"name": name or f"test-{next(_names)}"},
            "spec": spec,
        }


XGBOOST = Kind(
    "XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", "xgboost",
    {"Master": 1, "Worker": 2}, XGBOOST_CRD_FILE, False,
)  # fmt: skip
JAX = Kind("JAXJob", "jaxjobs", "jaxReplicaSpecs", "jax", {"Worker": 2}, JAX_CRD_FILE, True)
PADDLE = Kind(
    "PaddleJob", "paddlejobs", "paddleReplicaSpecs", "paddle", {"Worker": 2}, PADDLE_CRD_FILE, True
)
KINDS = (XGBOOST, JAX, PADDLE)


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE)
    yield r
    r.stop()


def rejected(reg, kind: Kind, body: dict) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(kind.resource, "default", copy.deepcopy(body))
    assert (info.value.code, info.value.reason) == (422, "Invalid"), info.value.message
    assert info.value.status["details"]["kind"] == kind.name
    return " | ".join(
        f"{c['field']}: {c['message']}" for c in info.value.status["details"]["causes"]
    )


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_valid_job_is_stored_as_written_with_a_run_policy(reg, kind):
    body = kind.job(
        runPolicy={"cleanPodPolicy": "None", "managedBy": "kubeflow.org/training-operator"}
    )
    stored = reg.create(kind.resource, "default", copy.deepcopy(body))
    body["spec"]["runPolicy"]["suspend"] = False  # the schema's default
    assert stored["spec"] == body["spec"]
    bare = reg.create(kind.resource, "default", kind.job())
    assert bare["spec"]["runPolicy"] == {"suspend": False}  # D90: the v1.9 SDK reads it


def test_a_paddle_elastic_policy_is_stored_as_written(reg):
    elastic = {"minReplicas": 1, "maxReplicas": 3, "maxRestarts": 2, "metrics": [{"type": "x"}]}
    stored = reg.create(PADDLE.resource, "default", PADDLE.job(elasticPolicy=elastic))
    assert stored["spec"]["elasticPolicy"] == elastic


def _on(kind: Kind, rtype: str, edit: Callable[[dict], None]) -> Callable[[dict], None]:
    return lambda b: edit(b["spec"][kind.field][rtype])


def _container(kind: Kind, rtype: str, **fields: str) -> Callable[[dict], None]:
    return _on(kind, rtype, lambda r: r["template"]["spec"]["containers"][0].update(fields))


# v1.9's webhook test tables, case by case, and what every kind bounds beyond them (D81)
CASES = [
    # XGBoostJob
    (XGBOOST, lambda b: b["metadata"].update(name="-test"), "metadata.name: Invalid value"),
    (
        XGBOOST,
        _on(XGBOOST, "Master", lambda r: r["template"]["spec"].update(containers=[])),
        "must have at least one container with name xgboost",
    ),
    (XGBOOST, _container(XGBOOST, "Master", image=""), "every container needs an image"),
    (
        XGBOOST,
        _container(XGBOOST, "Master", name=""),
        "must have at least one container with name xgboost",
    ),
    (
        XGBOOST,
        _on(XGBOOST, "Master", lambda r: r.update(replicas=2)),
        "spec.xgbReplicaSpecs[Master].replicas: Forbidden: must be 1",
    ),
    (
        XGBOOST,
        lambda b: b["spec"]["xgbReplicaSpecs"].pop("Master"),
        "spec.xgbReplicaSpecs[Master]: Required value: must be present",
    ),
    (
        XGBOOST,
        lambda b: b["spec"].update(runPolicy={"managedBy": "other-job-controller"}),
        'Unsupported value: "other-job-controller"',
    ),
    (
        XGBOOST,
        # in place of Worker: a third type would trip maxProperties, which (as kube-apiserver
        # does) leaves the CEL rules unchecked
        lambda b: b["spec"].update(
            xgbReplicaSpecs={**_without(b, "xgbReplicaSpecs", "Worker"), "Chief": XGBOOST.replica()}
        ),
        'spec.xgbReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: "Master", '
        '"Worker"',
    ),
    (XGBOOST, lambda b: b["spec"].pop("xgbReplicaSpecs"), "Required value"),
    # JAXJob
    (JAX, lambda b: b["metadata"].update(name="0-test"), "metadata.name: Invalid value"),
    (
        JAX,
        _on(JAX, "Worker", lambda r: r["template"]["spec"].update(containers=[])),
        "must have at least one container with name jax",
    ),
    (JAX, _container(JAX, "Worker", image=""), "every container needs an image"),
    (JAX, _container(JAX, "Worker", name=""), "must have at least one container with name jax"),
    (JAX, lambda b: b["spec"].pop("jaxReplicaSpecs"), "Required value"),
    (
        JAX,
        lambda b: b["spec"].update(jaxReplicaSpecs={"Master": JAX.replica()}),
        'spec.jaxReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Worker"',
    ),
    # PaddleJob
    (PADDLE, lambda b: b["metadata"].update(name="__test"), "metadata.name: Invalid value"),
    (
        PADDLE,
        _on(PADDLE, "Worker", lambda r: r["template"]["spec"].update(containers=[])),
        "must have at least one container with name paddle",
    ),
    (PADDLE, _container(PADDLE, "Worker", image=""), "every container needs an image"),
    (
        PADDLE,
        _container(PADDLE, "Worker", name=""),
        "must have at least one container with name paddle",
    ),
    (PADDLE, lambda b: b["spec"].pop("paddleReplicaSpecs"), "Required value"),
    (
        PADDLE,
        lambda b: b["spec"].update(runPolicy={"managedBy": "other-job-controller"}),
        'Unsupported value: "other-job-controller"',
    ),
    (
        PADDLE,
        lambda b: b["spec"]["paddleReplicaSpecs"].update(worker=PADDLE.replica()),
        'Unsupported value: "worker"',
    ),
]


def _without(body: dict, field: str, replica_type: str) -> dict:
    return {k: v for k, v in body["spec"][field].items() if k != replica_type}


CASES += [
    case
    for kind in KINDS
    for case in (
        (kind, lambda b, k=kind: b["spec"].update({k.field: {}}), "should have at least 1"),
        (
            kind,
            _on(kind, "Worker", lambda r: r.update(replicas=1001)),
            "less than or equal to 1000",
        ),
        (
            kind,
            _on(kind, "Worker", lambda r: r.update(restartPolicy="Sometimes")),
            "Unsupported value",
        ),
        (kind, lambda b: b["spec"].update(runPolicy={"backoffLimit": -1}), "greater than or"),
        (kind, lambda b: b["metadata"].update(name="x" * 57), "is too long: the Service names"),
        (
            kind,
            _container(kind, "Worker", ports=[{"name": "p", "containerPort": 70000}]),  # type: ignore[arg-type]
            "less than or equal to 65535",
        ),
    )
]


@pytest.mark.parametrize(
    ("kind", "mutate", "why"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_what_v1_9_refuses_is_refused(reg, kind, mutate, why):
    body = kind.job()
    mutate(body)
    assert why in rejected(reg, kind, body)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_managed_by_is_immutable(reg, kind):
    name = f"imm-{next(_names)}"
    reg.create(
        kind.resource,
        "default",
        kind.job(name, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}),
    )
    current = reg.get(kind.resource, "default", name)
    current["spec"]["runPolicy"].pop("managedBy")
    with pytest.raises(StatusError, match="spec.runPolicy.managedBy is immutable"):
        reg.update(kind.resource, "default", name, current)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_printer_columns_and_scale_are_v1_9s(reg, kind):
    crd = reg.get(CRDS, None, f"{kind.plural}.kubeflow.org")
    (version,) = crd["spec"]["versions"]
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("State", ".status.conditions[-1:].type"),
        ("Age", ".metadata.creationTimestamp"),
    ]
    scale = version["subresources"].get("scale")
    if not kind.scale:  # v1.9's XGBoostJob CRD has none
        assert scale is None
        return
    assert scale == {
        "specReplicasPath": f".spec.{kind.field}.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector",
    }


EXAMPLES = [
    (kind, path)
    for kind, folder in ((XGBOOST, "xgboost"), (JAX, "jax"), (PADDLE, "paddle"))
    for path in sorted((ROOT / "examples" / folder).rglob("*.yaml"))
]


@pytest.mark.parametrize(("kind", "path"), EXAMPLES, ids=lambda v: getattr(v, "name", str(v)))
def test_every_example_of_the_kind_is_admitted_as_written(reg, kind, path):
    body = yaml.safe_load(path.read_text())
    assert body["kind"] == kind.name
    body["metadata"].pop("namespace", None)
    stored = reg.create(kind.resource, "default", copy.deepcopy(body))
    assert stored["spec"][kind.field] == body["spec"][kind.field]


def _job_kind(kind: Kind):
    return {"XGBoostJob": XGBOOSTJOB_KIND, "JAXJob": JAXJOB_KIND, "PaddleJob": PADDLEJOB_KIND}[
        kind.name
    ]


def _names_a_manager(case: tuple) -> bool:
    body = case[0].job(name="test")
    case[1](body)
    return bool((body["spec"].get("runPolicy") or {}).get("managedBy"))


# A managedBy the operator does not know is refused by the CRD; the operator, on a cluster that
# does not enforce it, leaves such a job to the controller it names (D63) rather than failing it.
AGREEMENT = [c for c in CASES if not _names_a_manager(c)]


@pytest.mark.parametrize(
    ("kind", "mutate", "why"), AGREEMENT, ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)]
)
def test_the_operator_refuses_what_the_crd_refuses(kind, mutate, why):
    """For clusters that do not enforce the CRD's rules, the operator's own validation refuses
    the same jobs (D8)."""
    body = kind.job(name="test")
    mutate(body)
    with pytest.raises(InvalidJobError):
        _job_kind(kind).decode(body, DEFAULTS_V1_9)
    _job_kind(kind).decode(kind.job(name="test"), DEFAULTS_V1_9)  # the unmutated one passes
