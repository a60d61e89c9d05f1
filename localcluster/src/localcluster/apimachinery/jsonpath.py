"""The simple JSONPath forms Kubernetes objects name fields with: ``.a.b``, ``.a[0].b``,
``.a[-1:].b`` (CRD printer columns and scale subresource paths)."""

from __future__ import annotations

import re
from typing import Any

_PATH_TOKEN = re.compile(r"\.([^.\[]+)|\[(-?\d+)(:)?\]")


def json_path(obj: Any, path: str) -> Any:
    """Evaluate the simple JSONPath forms CRDs use in additionalPrinterColumns."""
    cur = obj
    for m in _PATH_TOKEN.finditer(path.strip().lstrip("{").rstrip("}")):
        if cur is None:
            return None
        field, index, is_slice = m.group(1), m.group(2), m.group(3)
        if field is not None:
            cur = cur.get(field) if isinstance(cur, dict) else None
        elif isinstance(cur, list):
            i = int(index)
            try:
                cur = cur[i:][0] if is_slice else cur[i]
            except IndexError:
                return None
        else:
            return None
    return cur
