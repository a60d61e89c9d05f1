"""A kustomization that combines a shipped overlay with shipped components, as a user's own
kustomization does (``resources: [overlay]``, ``components: [...]``, optionally another
``namespace``). kustomize refuses absolute paths there, so the paths are written relative."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def combined_kustomization(
    target: Path, overlay: str, *components: str, namespace: str | None = None
) -> Path:
    """Write ``target/kustomization.yaml``: ``manifests/overlays/<overlay>`` with
    ``manifests/components/<component>`` added (and moved to ``namespace``); return ``target``."""
    kustomization: dict[str, object] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(MANIFESTS / "overlays" / overlay, target)],
        "components": [os.path.relpath(MANIFESTS / "components" / c, target) for c in components],
    }
    if namespace:
        kustomization["namespace"] = namespace
    (target / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return target
