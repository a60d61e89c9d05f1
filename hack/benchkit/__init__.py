"""The benchmark kit behind ``make bench`` (the operator and efficiency budgets and the
component benchmarks).

``driver`` runs every suite (``suites``: one module per benchmark, each behind a
``hack/bench_<name>.py`` door) and writes docs/benchmarks.md with ``report`` and ``plots``.
The operator benchmark (``suites.operator``) is built from one module per concern:
``workload`` (the TFJobs and the bodies a bare client sends), ``cluster`` (an in-process local
cluster and its request counters), ``observe`` (when each pod, service and job state is first
seen), ``procs`` (the process under test: our operator, a reference binary, the floor or the
lean client, with CPU and RSS read from /proc), ``floor`` (the bare threaded client, also
runnable as ``python -m benchkit.floor``), ``lean`` (the lean lifecycle client), ``scenarios``
(burst, scaling, steady load, memory, start-up), ``goals`` (the budgets as measured /
goal / pass), ``stats`` and ``profile``.

What it imports of the operator (an import contract holds it): the operator is measured as a
black box, over HTTP, so nothing here imports its controllers, API types, SDK or app. Only
our client-go (``tf_operator.k8s``) is imported, by the three things built on it: the lean
client (``lean``: the operator's REST client without the operator, to show what the client
layer itself costs) and the informer and workqueue benchmarks (which measure that layer).
"""
