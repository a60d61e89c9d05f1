"""docs/benchmarks.md: a report for people, from the figures ``hack/bench.py`` gathered.

Order: the headline tables of the efficiency budgets (beside their figures from before that
work) and the operator budgets, each row named by what it measures, the conditions of the run, one short section per operator benchmark (what it
does, how to reproduce it, its figures and plot), the floor and the operator on the real
control plane beside the emulated figures, the local cluster beside an older tree, then
the component benchmarks (workqueue, informer, API server with its cost per layer) in brief.
"""

from __future__ import annotations

from typing import Any

from benchkit.goals import EFFICIENCY_BUDGETS, OPERATOR_BUDGETS

VERDICT = {True: "pass", False: "**FAIL**", None: "not measured"}


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if c is None else str(c) for c in row) + " |" for row in rows]
    return lines


def _v(value: Any, unit: str = "") -> str:
    return "–" if value is None else f"{value}{unit}"


def render(doc: dict[str, Any], plots: dict[str, str]) -> str:
    results = doc.get("results") or {}
    operator = (results.get("operator") or {}).get("figures") or {}
    figures = operator.get("figures") or {}
    lines = ["# Benchmarks", ""]
    lines += [
        "Written by `make bench` (`hack/bench.py`; `make bench ARGS=--quick` for a short run).",
        "Every figure comes from one run on the machine below, against this project's local",
        "cluster (API server, scheduler and simulated kubelets in one process). Wall-clock",
        "figures depend on what else the machine was doing: the load average is recorded.",
        "",
    ]
    # the JSON keys ("goals26", "before_issue26") are kept so earlier runs still render
    lines += _headline_efficiency(operator.get("goals26") or [], doc.get("before_issue26") or {})
    lines += _headline(operator.get("goals") or [])
    lines += _conditions(doc, figures)
    if figures:
        lines += _cluster(figures)
        lines += _burst(figures, plots)
        lines += _cpu(figures, doc.get("baseline") or {}, plots, doc.get("operator_commit"))
        lines += _scaling(figures, plots)
        lines += _steady(figures, plots)
        lines += _requests(figures)
        lines += _memory(figures, plots)
        lines += _reference(figures)
        lines += _real_control_plane(figures)
    lines += _components(results)
    return "\n".join(lines) + "\n"


def _budget(goal: dict[str, Any], names: dict[int, str]) -> str:
    """What the row's budget measures (runs written before rows carried it: by number)."""
    return str(goal.get("budget") or names.get(goal.get("number", 0), "?"))


def _headline_efficiency(goals: list[dict[str, Any]], before: dict[str, Any]) -> list[str]:
    if not goals:
        return []
    then = before.get("measured") or {}
    rows = [
        [_budget(g, EFFICIENCY_BUDGETS), g["what"], then.get(g.get("key", ""), "–"), g["measured"],
         g["goal"], g["compared_with"], VERDICT[g["passed"]]]
        for g in goals
    ]  # fmt: skip
    passed = sum(1 for g in goals if g["passed"])
    load = before.get("load_at_start") or ["?"]
    return [
        "## Efficiency budgets",
        "",
        f'{passed} of {len(goals)} rows pass. "Before" is the run of '
        f"{before.get('commit', '?')} ({before.get('written', '?')}, load {load[0]} at its "
        "start), the last before the efficiency work; the local cluster's create throughput "
        "as measured then.",
        "",
        *_table(["budget", "what", "before", "now", "goal", "compared with", "pass"], rows),
        "",
    ]


def _headline(goals: list[dict[str, Any]]) -> list[str]:
    if not goals:
        return ["The operator benchmark did not run.", ""]
    rows = [
        [_budget(g, OPERATOR_BUDGETS), g["what"], g["measured"], g["goal"], g["compared_with"],
         VERDICT[g["passed"]]
         + (f" (restated as {g['superseded_by']})" if g.get("superseded_by") else "")]
        for g in goals
    ]  # fmt: skip
    passed = sum(1 for g in goals if g["passed"])
    restated = sum(1 for g in goals if g.get("superseded_by"))
    return [
        "## Operator budgets",
        "",
        f"{passed} of {len(goals)} rows pass; the efficiency budgets restated {restated} of them "
        "(above).",
        "",
        *_table(["budget", "what", "measured", "goal", "floor / reference", "pass"], rows),
        "",
    ]


def _conditions(doc: dict[str, Any], figures: dict[str, Any]) -> list[str]:
    machine = doc.get("machine") or {}
    settings = figures.get("settings") or {}
    rows = [[k, v] for k, v in machine.items()]
    rows += [
        ["commit (last one touching the operator)", f"{doc.get('commit')} "
         f"({doc.get('operator_commit')})"],
        ["written", doc.get("written")],
        ["load average (1, 5, 15 min) at start / end", f"{doc.get('load_at_start')} / "
         f"{doc.get('load_at_end')}"],
        ["quick run", settings.get("quick")],
        ["endpoints controller", settings.get("endpoints_controller")],
        ["job shape", f"{settings.get('ps')} PS + {settings.get('workers')} workers, workers "
         f"run {settings.get('worker_run_seconds')} s"],
    ]  # fmt: skip
    return ["## Conditions", "", *_table(["", ""], rows), ""]


def _cluster(figures: dict[str, Any]) -> list[str]:
    side = figures.get("cluster_side_by_side") or {}
    if not side or side.get("error"):
        return []
    rows = []
    for key in ("baseline", "today"):
        tree = side.get(key) or {}
        for i, run in enumerate(tree.get("runs") or [], 1):
            rows.append(
                [tree.get("label"), i, _v(run.get("wall_s"), " s"),
                 _v(run.get("server_cpu_s"), " s"), f"{run.get('created')} / {run.get('requests')}",
                 _v(run.get("load"))]
            )  # fmt: skip
    return [
        "## The local cluster beside main at " + str(side.get("baseline_commit")),
        "",
        "Every test, benchmark and demo runs on the local cluster, so its own speed is",
        f"measured against a fixed tree: main at {side.get('baseline_commit')}, installed in a",
        "venv of its own (kept under `.venv/bench-cache/`). Each round starts one tree's",
        "cluster as a process (simulated kubelets, two nodes, endpoints controller on),",
        f"creates the TFJob CRD and {side.get('jobs')} TFJobs, then the bare client",
        f"(`benchkit.creates`, {side.get('threads')} keep-alive connections) sends their "
        f"{side.get('creates')} pods and services; rounds alternate between the trees and",
        "each tree's best round counts. Server CPU is the cluster process's, from /proc.",
        "",
        "Reproduce: `.venv/bin/python hack/bench_operator.py --only cluster`; the cost of each",
        "API-server layer per request: `.venv/bin/python -m benchkit.layers` (from `hack/`).",
        "",
        *_table(["tree", "round", "2,000 creates", "server CPU", "created", "load"], rows),
        "",
    ]


def _run_row(run: dict[str, Any]) -> list[Any]:
    return [
        run.get("subject"),
        run.get("jobs"),
        _v(run.get("all_pods_and_services_s"), " s"),
        f"{_v(run.get('per_job_p50_s'))} / {_v(run.get('per_job_p99_s'))} s",
        _v(run.get("cpu_s_to_all_objects"), " s"),
        _v(run.get("cpu_ms_per_job"), " ms"),
        _v(run.get("requests_per_job")),
        _v(run.get("peak_rss_mib"), " MiB"),
        _v(run.get("load_at_start", [None])[0]),
    ]


def _burst(figures: dict[str, Any], plots: dict[str, Any]) -> list[str]:
    keys = ("floor", "floor_objects", "lean", "operator_default", "operator_t4")
    runs = [figures.get(k) for k in keys]
    runs.append((figures.get("reference") or {}).get("burst"))
    rows = [_run_row(r) for r in runs if r and not r.get("error")]
    out = [
        "## Burst",
        "",
        "N TFJobs are created at once (in-process, in well under a second); the clock runs",
        "until every pod and service of every job exists. The floor is a bare threaded",
        "client (`hack/benchkit/floor.py`: 16 threads, one keep-alive connection each) that",
        "watches TFJobs and sends only what a job cannot do without: its pods and services,",
        "one event per object and the first status write, holding pod and service watches",
        "as any controller does (and, as a second floor, pods and services alone, no watches",
        "but TFJobs). The floor runs before and after the operators; the faster run counts.",
        "The lean lifecycle client (`hack/benchkit/lean.py`) goes through each job's whole",
        "lifecycle with the fewest requests (the minimum of the requests section) over the",
        "operator's own REST client, decoding the TFJob and pod watches to see jobs arrive",
        "and worker 0 exit, and nothing else: no caches, expectations, workqueue, logging or",
        "event correlation. Its CPU per job is the least a Python process on this stack",
        "spends on a job lifecycle.",
        'CPU is the process\'s user + system time from /proc; "CPU per job"',
        "runs to the process's last request (for operators: after every job Succeeded and its",
        "PS pod and service were deleted).",
        "",
        "Reproduce: `.venv/bin/python hack/bench_operator.py --only burst [--burst 200]`.",
        "",
        *_table(
            [
                "subject",
                "jobs",
                "all pods + services",
                "per job p50 / p99",
                "CPU until then",
                "CPU per job",
                "requests per job",
                "peak RSS",
                "load",
            ],
            rows,
        ),  # fmt: skip
        "",
    ]
    if "latency" in plots:
        out += [f"![per-job latency](img/{plots['latency']})", ""]
    return out


def _same_code_note(baseline: dict[str, Any], operator_commit: str | None) -> list[str]:
    if not operator_commit or baseline.get("commit") != operator_commit:
        return []
    return [
        f"This run measured the same operator code ({operator_commit}): the columns differ",
        "only by what else the machine was doing (compare the load averages).",
    ]


def _lean_note(lean: dict[str, Any]) -> list[str]:
    if lean.get("cpu_ms_per_job") is None:
        return []
    return [
        f"The lean lifecycle client used {_v(lean['cpu_ms_per_job'], ' ms')} per job in the",
        f"same burst ({_v(lean.get('requests_per_job'))} requests per job): the least a",
        "Python process on this stack spends on a lifecycle (see Burst).",
    ]


def _cpu(
    figures: dict[str, Any], baseline: dict[str, Any], plots: dict[str, Any], doc_commit: str | None
) -> list[str]:
    before = baseline.get("figures") or {}
    rows = []
    for key in ("operator_default", "operator_t4"):
        now, then = figures.get(key) or {}, before.get(key) or {}
        rows.append(
            [now.get("subject") or then.get("subject"), _v(then.get("cpu_ms_per_job"), " ms"),
             _v(then.get("load_at_start", [None])[0]), _v(now.get("cpu_ms_per_job"), " ms"),
             _v(now.get("load_at_start", [None])[0]), _v(now.get("threads"))]
        )  # fmt: skip
    out = [
        "## CPU per job lifecycle",
        "",
        "Operator CPU (from /proc) from the burst's start to its last request, divided by the",
        "jobs: creation, status updates, success, cleanup of the PS pod and service. The",
        f'"before" column was recorded at {baseline.get("commit", "?")} '
        f"({baseline.get('recorded', '?')}), before the stage-2 optimisations.",
        *_same_code_note(baseline, doc_commit),
        *_lean_note(figures.get("lean") or {}),
        "",
        *_table(["subject", "before", "load then", "now", "load now", "threads"], rows),
        "",
    ]
    if "cpu" in plots:
        out += [f"![CPU per job](img/{plots['cpu']})", ""]
    return out


def _scaling(figures: dict[str, Any], plots: dict[str, Any]) -> list[str]:
    scaling = figures.get("scaling") or {}
    by_jobs: dict[int, dict[str, Any]] = {}
    for key in ("floor", "operator"):
        for p in scaling.get(key) or []:
            if "jobs" in p:
                by_jobs.setdefault(p["jobs"], {})[key] = p
    rows = []
    for jobs in sorted(by_jobs):
        f, o = by_jobs[jobs].get("floor", {}), by_jobs[jobs].get("operator", {})
        rows.append(
            [jobs, _v(f.get("all_pods_and_services_s"), " s"), _v(f.get("ms_per_job"), " ms"),
             _pair(f, "cluster_cpu_ms_per_job", "cluster_cpu_ms_per_job_total"),
             _v(o.get("all_pods_and_services_s"), " s"), _v(o.get("ms_per_job"), " ms"),
             _pair(o, "cpu_ms_per_job_to_all_objects", "cpu_ms_per_job"),
             _pair(o, "cluster_cpu_ms_per_job", "cluster_cpu_ms_per_job_total"),
             _v(o.get("peak_rss_mib"), " MiB"), _v(o.get("load_at_start", [None])[0])]
        )  # fmt: skip
    out = [
        "## Scaling",
        "",
        "The burst at growing sizes, endpoints controller on, workers running throughout (so",
        "each size does the same work per job). The cost per job must stay flat for the",
        "operator and for the local cluster itself (its CPU covers the API server, scheduler,",
        'simulated kubelets and endpoints controller). CPU columns read "until all objects',
        "exist / until the subject's last request\": a burst of 100 jobs is over in a second",
        "or two, before much of its pods' start-up, so its first figure leaves out a share",
        "of the work that a two-minute burst's holds.",
        "The smallest burst lasts a second or two, so it runs three times, interleaved, and",
        f"the median run counts (times per job of all three: {_runs(by_jobs)}).",
        "",
        "Reproduce: `.venv/bin/python hack/bench_operator.py --only scaling "
        "--scaling 100,1000,5000`.",
        "",
        *_table(
            [
                "jobs",
                "floor",
                "floor per job",
                "cluster CPU per job (floor)",
                "operator",
                "operator per job",
                "operator CPU per job",
                "cluster CPU per job (operator)",
                "operator peak RSS",
                "load",
            ],
            rows,
        ),  # fmt: skip
        "",
    ]
    if "scaling" in plots:
        out += [f"![scaling](img/{plots['scaling']})", ""]
    return out


def _pair(run: dict[str, Any], first: str, second: str) -> str:
    return f"{_v(run.get(first))} / {_v(run.get(second), ' ms')}"


def _runs(by_jobs: dict[int, dict[str, Any]]) -> str:
    """Time per job of each run of the smallest burst, floor and operator."""
    smallest = by_jobs[min(by_jobs)] if by_jobs else {}
    parts = [
        f"{key} " + " / ".join(_v(v, " ms") for v in runs)
        for key in ("floor", "operator")
        if (runs := smallest.get(key, {}).get("runs_ms_per_job"))
    ]
    return "; ".join(parts) or "not recorded"


def _steady(figures: dict[str, Any], plots: dict[str, Any]) -> list[str]:
    run = figures.get("steady") or {}
    out = [
        "## Steady load",
        "",
        "TFJobs created at a fixed rate; for each, the time from its creation to all its pods",
        "existing. The operator's `workqueue_depth` is scraped from its /metrics every second.",
        "",
        "Reproduce: `.venv/bin/python hack/bench_operator.py --only steady --steady-s 120`.",
        "",
        *_table(
            ["rate", "jobs", "p50", "p99", "max", "queue depth max / mean", "operator CPU"],
            [
                [
                    _v(run.get("rate_per_s"), "/s"),
                    run.get("jobs"),
                    _v(run.get("p50_s"), " s"),
                    _v(run.get("p99_s"), " s"),
                    _v(run.get("max_s"), " s"),
                    f"{_v(run.get('depth_max'))} / {_v(run.get('depth_mean'))}",
                    _v(run.get("cpu_s"), " s"),
                ]
            ],
        ),  # fmt: skip
        "",
    ]
    if "steady" in plots:
        out += [f"![queue depth](img/{plots['steady']})", ""]
    return out


def _requests(figures: dict[str, Any]) -> list[str]:
    runs = {
        "minimum": None,
        "defaults": figures.get("operator_default"),
        "--threadiness 4": figures.get("operator_t4"),
        "reference": (figures.get("reference") or {}).get("burst"),
    }
    kinds: list[str] = []
    for run in runs.values():
        for kind in (run or {}).get("requests_per_job_by_kind") or {}:
            if kind not in kinds:
                kinds.append(kind)
    present = {k: r for k, r in runs.items() if r and not r.get("error")}
    rows = [[kind] + [(r.get("requests_per_job_by_kind") or {}).get(kind, 0)
                      for r in present.values()] for kind in kinds]  # fmt: skip
    rows.append(["**total**"] + [r.get("requests_per_job") for r in present.values()])
    rows.append(["409 conflicts (all jobs)"] + [r.get("conflicts_409") for r in present.values()])
    rows.append(
        ["deletes per pod / service"]
        + [f"{_v((r.get('deletes_per_object') or {}).get('pods'))} / "
           f"{_v((r.get('deletes_per_object') or {}).get('services'))}" for r in present.values()]
    )  # fmt: skip
    rows.append(["events sent (all jobs)"] + [r.get("events_sent") for r in present.values()])
    rows.append(
        ["events stored (sum of counts)"]
        + [sum(v for k, v in (r.get("events_stored") or {}).items() if k != "LeaderElection")
           for r in present.values()]
    )  # fmt: skip
    return [
        "## API requests per job",
        "",
        "Requests each process made, counted by the API server per client",
        "(`apiserver_request_total{client,verb,resource,code}`), leader-election traffic",
        f"apart. The least a v0.5.3-faithful operator can make is "
        f"{figures.get('minimum_requests_per_job')} per job: one create per pod and service,",
        "three status writes, a DELETE of the PS pod and of its service (no GET first: D52),",
        "and one event per create, delete, worker 0's exit and the success.",
        "",
        *_table(["per job", *present.keys()], rows),
        "",
    ]


def _memory(figures: dict[str, Any], plots: dict[str, Any]) -> list[str]:
    ours = figures.get("memory") or {}
    ref = (figures.get("reference") or {}).get("memory") or {}
    rows = []
    for run in (ours, ref):
        if run.get("points"):
            rows.append(
                [run.get("subject"), _v(run.get("startup_cpu_s"), " s"),
                 _v(run.get("idle_rss_mib"), " MiB"), _v(run.get("idle_threads"))]
                + [f"{p['pods']:,}: {p['rss_mib']} MiB" for p in run["points"][1:]]
                + [_v(run.get("bytes_per_cached_pod"), " B")]
            )  # fmt: skip
    width = max((len(r) for r in rows), default=6)
    header = ["subject", "start-up CPU", "idle RSS", "idle threads"]
    header += ["RSS with pods cached"] * (width - 5) + ["bytes per cached pod"]
    out = [
        "## Memory",
        "",
        "The operator starts on an empty cluster (start-up CPU: until it watches TFJobs, pods",
        "and services; idle RSS once its CPU is flat). Then pods shaped like the operator's",
        "(labels, owner reference, TF_CONFIG, a Running status) are added, bound to a node",
        "that does not exist and owned by a ConfigMap, so every informer caches them and",
        "nothing acts on them; RSS is read once the operator's CPU is flat again.",
        "",
        "Reproduce: `.venv/bin/python hack/bench_operator.py --only memory --memory 10000,50000`.",
        "",
        *_table(header, rows),
        "",
    ]
    if "memory" in plots:
        out += [f"![RSS vs cached pods](img/{plots['memory']})", ""]
    return out


def _reference(figures: dict[str, Any]) -> list[str]:
    ref = figures.get("reference") or {}
    if ref.get("not_run"):
        text = f"Not run: {ref['not_run']}."
    else:
        jobs = (ref.get("burst") or {}).get("jobs")
        text = (
            f"Ran `{ref.get('binary')}` through the same code: a {jobs}-job burst (v0.5.3's "
            "client is throttled at 5 QPS, so larger bursts take minutes) and the memory "
            "scenario; its figures are the reference columns above."
        )
    return [
        "## Reference binary",
        "",
        text,
        "",
        "Reproduce: `TFOP_REFERENCE_BIN=/path/to/tf-operator make bench`. The binary gets",
        "KUBECONFIG in its environment and `--monitoring-port`, `--json-log-format=true`.",
        "",
    ]


def _components(results: dict[str, Any]) -> list[str]:
    out = ["## Component benchmarks", ""]
    for name, outcome in results.items():
        if name == "operator":
            continue
        figures = outcome.get("figures") or {}
        rows = [[k, v] for k, v in _flatten(figures) if not isinstance(v, list)]
        out += [
            f"### {name}",
            "",
            f"`.venv/bin/python hack/bench_{name}.py` (exit code {outcome.get('exit_code')}, "
            f"{outcome.get('wall_seconds')} s).",
            "",
            "<details><summary>figures</summary>",
            "",
            *_table(["figure", "value"], rows),
            "",
            "</details>",
            "",
        ]
    return out


def _flatten(figures: dict[str, Any] | list[Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Rows of (dotted key, value); a list of records (one per size, say) gives ``[i].``
    prefixes."""
    if isinstance(figures, list):
        items: list[tuple[Any, Any]] = [(f"[{i}]", value) for i, value in enumerate(figures)]
    else:
        items = list(figures.items())
    rows: list[tuple[str, Any]] = []
    for key, value in items:
        records = isinstance(value, list) and all(isinstance(v, dict) for v in value)
        if isinstance(value, dict) or (records and value):
            rows += _flatten(value, f"{prefix}{key}.")
        else:
            rows.append((f"{prefix}{key}", value))
    return rows


def _real_control_plane(figures: dict[str, Any]) -> list[str]:
    real = figures.get("real_control_plane") or {}
    if not real:
        return []
    emulated = figures.get("scaling") or {}

    def emulated_ms(kind: str, jobs: Any) -> Any:
        runs = [r for r in emulated.get(kind) or [] if r.get("jobs") == jobs]
        burst = figures.get("floor" if kind == "floor" else "operator_default") or {}
        runs += [burst] if burst.get("jobs") == jobs else []  # the burst scenario's size
        return runs[0].get("ms_per_job") if runs else None

    rows = []
    for kind in ("floor", "operator"):
        for run in real.get(kind) or []:  # one run per size
            jobs = run.get("jobs")
            rows.append(
                [kind, jobs, _v(run.get("ms_per_job"), " ms"), _v(emulated_ms(kind, jobs), " ms"),
                 f"{_v(run.get('per_job_p50_s'))} / {_v(run.get('per_job_p99_s'))} s",
                 _v(run.get("cpu_ms_per_job"), " ms"), _v(run.get("apiserver_requests_per_job")),
                 _v(run.get("load_at_start")), "yes" if run.get("complete") else "**no**"]
            )  # fmt: skip
    return [
        "## The floor and the operator on the real control plane",
        "",
        'The scaling burst (workers running throughout) on `LocalCluster(control_plane="real",',
        'kubelet="simulated")`: etcd, kube-apiserver, kube-controller-manager and kube-scheduler',
        "(which binds the pods), our simulated kubelets over HTTPS; the benchmark writes and",
        "watches through `cluster.client`. Time per job is to all pods and services, beside the",
        "emulated figure at the same size from the scaling or burst scenario (when it ran; the",
        "burst's workers run 1 s). CPU per job is",
        "the subject's, to when it goes quiet. kube-apiserver's `apiserver_request_total` has",
        "no client label: its requests per job are every client's (the subject, the",
        "benchmark's TFJob creates, kube-scheduler's bindings, the kubelets' status writes,",
        "kube-controller-manager), leases left out. Run alone: `cd hack && python",
        "bench_operator.py --only real` (`--real 200,1000` for the sizes).",
        "",
        *([str(real["note"]), ""] if real.get("note") else []),
        *_table(
            [
                "subject",
                "jobs",
                "time per job (real)",
                "time per job (emulated)",
                "per job p50 / p99",
                "CPU per job",
                "kube-apiserver requests per job",
                "load at start",
                "complete",
            ],
            rows,
        ),  # fmt: skip
        "",
    ]
