"""The operator benchmark kit behind ``hack/bench_operator.py`` (issue 11).

One module per concern: ``workload`` (the TFJobs and the bodies a bare client sends),
``cluster`` (an in-process local cluster and its request counters), ``observe`` (when each
pod, service and job state is first seen), ``procs`` (the process under test: our operator,
a reference binary or the floor client, with CPU and RSS read from /proc), ``floor`` (the
bare threaded client, also runnable as ``python -m benchkit.floor``), ``scenarios`` (burst,
scaling, steady load, memory, start-up), ``goals`` (issue 11's goals as measured / goal /
pass), ``report`` and ``plots`` (docs/benchmarks.md and docs/img/*.png).

Nothing here imports the operator: it is measured as a black box, over HTTP, like any client.
"""
