"""The golden test's helper modules (``golden_*.py``) are shared with ``record.py``, a script;
both import them by name from this directory."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
