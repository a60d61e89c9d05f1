"""The shipped TFJob (and the other kinds') CRDs for tests, whole or without the checks a cluster may not enforce.

A cluster without CEL (before Kubernetes 1.25), or one still serving an older CRD, does not
refuse what the CRD's rules, bounds, formats and enums refuse; it still checks the structural
schema's types. ``without_checks`` gives that schema: the operator's own validation is then the
only guard, which the reliability and fuzz tests exercise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CRD_FILE = Path(__file__).resolve().parents[2] / "manifests/base/crd.yaml"
PYTORCH_CRD_FILE = Path(__file__).resolve().parents[2] / "manifests/components/pytorchjob/crd.yaml"
XGBOOST_CRD_FILE = Path(__file__).resolve().parents[2] / "manifests/components/xgboostjob/crd.yaml"
JAX_CRD_FILE = Path(__file__).resolve().parents[2] / "manifests/components/jaxjob/crd.yaml"
PADDLE_CRD_FILE = Path(__file__).resolve().parents[2] / "manifests/components/paddlejob/crd.yaml"
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
TFJOB_CRD_NAME = "tfjobs.kubeflow.org"

# Checks beyond the structural schema's types.
SCHEMA_CHECKS = (
    "x-kubernetes-validations",
    "maximum",
    "minimum",
    "format",
    "enum",
    "minProperties",
    "maxProperties",
    "maxItems",
    "required",
)


def tfjob_crd() -> dict:
    return yaml.safe_load(CRD_FILE.read_text())


def crd_objects(*paths: Path) -> list[dict]:
    """Every CRD of the manifest files ``paths`` (the TFJob CRD when none is named), for
    ``LocalCluster(crds=...)``."""
    return [
        doc for path in paths or (CRD_FILE,) for doc in yaml.safe_load_all(path.read_text()) if doc
    ]


def install_crds(client: Any, *paths: Path) -> None:
    """Create every CRD of the manifest files ``paths`` (the TFJob CRD when none is named), then
    wait until each is served (a real kube-apiserver serves a new CRD a moment after creating
    it). ``client`` is a ``ClusterClient`` or the emulator's ``Registry`` (which serves a CRD
    the moment it is created)."""
    crds = crd_objects(*paths)
    if hasattr(client, "resource_info"):  # a ClusterClient: what LocalCluster(crds=...) does
        from localcluster.cluster import install_crds as install_and_wait

        install_and_wait(client, crds)
        return
    for crd in crds:
        client.create(CRDS, None, crd)


def without_checks(schema: Any) -> Any:
    """``schema`` (or a whole CRD) without the keys in ``SCHEMA_CHECKS``."""
    if isinstance(schema, dict):
        return {k: without_checks(v) for k, v in schema.items() if k not in SCHEMA_CHECKS}
    if isinstance(schema, list):
        return [without_checks(v) for v in schema]
    return schema


def strip_crd_validation(registry: Any) -> None:
    """Replace the installed TFJob CRD's schema by one without its checks."""
    crd = registry.get(CRDS, None, TFJOB_CRD_NAME)
    for version in crd["spec"]["versions"]:
        version["schema"] = without_checks(version["schema"])
    registry.update(CRDS, None, TFJOB_CRD_NAME, crd)
