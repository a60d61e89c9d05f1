"""Workqueue throughput: one producer thread, N worker threads (get + done).

Measures items per second through the plain `Queue` (and the `RateLimitingQueue`, which
controllers use) from the first add until the last item is done. By default every key is
distinct, so each add is one item processed; pass a smaller `--keys` to exercise
deduplication. Prints the figures, then `BENCH_RESULT {json}` on the last line.

    .venv/bin/python hack/bench_workqueue.py [--items 200000] [--workers 4] [--keys N]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable

from tf_operator.k8s.workqueue import Queue, RateLimitingQueue, default_controller_rate_limiter
from tf_operator.k8s.workqueue.prometheus_metrics import PrometheusMetricsProvider

GOAL_ITEMS_PER_S = 50_000


def run(queue: Queue, items: int, workers: int, keys: int) -> dict[str, float]:
    gets = [0] * workers

    def worker(index: int) -> None:
        get, done = queue.get, queue.done
        count = 0
        while True:
            item, shutdown = get()
            if shutdown:
                break
            done(item)
            count += 1
        gets[index] = count

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    names = [f"ns/job-{i}" for i in range(keys)]
    start = time.perf_counter()
    add = queue.add
    for i in range(items):
        add(names[i % keys])
    queue.shut_down()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    processed = sum(gets)
    return {
        "adds": items,
        "gets": processed,
        "seconds": round(elapsed, 4),
        "adds_per_s": round(items / elapsed),
        "gets_per_s": round(processed / elapsed),
        "ops_per_s": round((items + processed) / elapsed),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--keys", type=int, default=0, help="key space (default: --items)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the median counts")
    args = parser.parse_args()

    cases: dict[str, Callable[[], Queue]] = {
        "queue": lambda: Queue(),
        "rate_limiting_queue": lambda: RateLimitingQueue(default_controller_rate_limiter()),
        "queue_with_prometheus_metrics": lambda: Queue(
            "bench", metrics_provider=PrometheusMetricsProvider()
        ),
    }
    keys = args.keys or args.items
    results = {}
    for label, factory in cases.items():
        runs = sorted(
            (run(factory(), args.items, args.workers, keys) for _ in range(args.repeat)),
            key=lambda r: r["gets_per_s"],
        )
        results[label] = r = runs[len(runs) // 2]
        print(
            f"{label:32s} {r['adds']} adds, {r['gets']} gets in {r['seconds']}s: "
            f"{r['adds_per_s']} adds/s, {r['gets_per_s']} gets/s, {r['ops_per_s']} adds+gets/s "
            f"(median of {args.repeat})"
        )
    items_per_s = results["queue"]["gets_per_s"]
    print(f"plain queue: {items_per_s} items/s (goal {GOAL_ITEMS_PER_S})")
    summary = {
        "workers": args.workers,
        "items": args.items,
        "items_per_s": items_per_s,
        "goal_items_per_s": GOAL_ITEMS_PER_S,
        "meets_goal": items_per_s >= GOAL_ITEMS_PER_S,
        "cases": results,
    }
    print("BENCH_RESULT " + json.dumps(summary, sort_keys=True))

    return 0


if __name__ == "__main__":
    sys.exit(main())
