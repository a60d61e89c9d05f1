"""The ``tfjob`` command line (console scripts ``tfjob`` and ``kubectl-tfjob``)."""
