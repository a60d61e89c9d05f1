"""Where the kit finds the repository it measures (it is installed editable from ``hack/``)."""

from pathlib import Path

HACK = Path(__file__).resolve().parents[1]
ROOT = HACK.parent
CRD_FILE = ROOT / "manifests/base/crd.yaml"
