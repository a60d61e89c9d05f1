#!/usr/bin/env python3
"""Benchmark: what a paginated LIST page costs the API server emulator as objects grow.

For each size, fills a registry with that many ConfigMaps in one namespace, then reads a full
``limit=500`` list page by page with one write between pages (so every page after the first
is read from the list's snapshot while the live data moves on), and times the first page of a
fresh list on its own. A page should cost the same at every size. The last line of output is
``BENCH_RESULT {json}``.

    .venv/bin/python hack/bench_paging.py [--sizes 2000 20000 100000] [--limit 500]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from localcluster.controlplane.emulated import Registry

CONFIGMAPS = ("", "v1", "configmaps")


def measure(size: int, limit: int) -> dict[str, Any]:
    registry = Registry()
    try:
        registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "bench"}})
        for i in range(size):
            registry.create(CONFIGMAPS, "bench", {"metadata": {"name": f"cm-{i:06d}"}})
        pages, token, started = 0, None, time.perf_counter()
        while True:
            _, _, token, _ = registry.list_page(
                CONFIGMAPS, "bench", limit=limit, continue_token=token
            )
            pages += 1
            patch = {"metadata": {"labels": {"page": str(pages)}}}
            registry.patch(CONFIGMAPS, "bench", "cm-000000", patch, "merge")
            if token is None:
                break
        per_page = (time.perf_counter() - started) / pages
        started = time.perf_counter()
        for _ in range(20):
            registry.list_page(CONFIGMAPS, "bench", limit=limit)
        first = (time.perf_counter() - started) / 20
    finally:
        registry.stop()
    return {
        "objects": size,
        "pages": pages,
        "ms_per_page": per_page * 1e3,
        "ms_first_page": first * 1e3,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 100000])
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()
    results = [measure(size, args.limit) for size in args.sizes]
    for r in results:
        print(
            f"{r['objects']:>7} objects: {r['pages']:>4} pages, {r['ms_per_page']:.2f} ms a page "
            f"(with a write between pages), first page alone {r['ms_first_page']:.2f} ms"
        )
    print("BENCH_RESULT " + json.dumps(results))

    return 0


if __name__ == "__main__":
    sys.exit(main())
