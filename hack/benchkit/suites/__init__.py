"""The benchmarks ``make bench`` runs, one module each, each behind a ``hack/bench_<name>.py``
door: ``apiserver``, ``batchscheduler``, ``informer``, ``operator`` (the operator and efficiency budgets, built on the
rest of :mod:`benchkit`), ``paging`` and ``workqueue``. Each prints figures for people and, as
its last line, ``BENCH_RESULT {json}`` for :mod:`benchkit.driver`.
"""
