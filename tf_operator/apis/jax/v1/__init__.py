"""JAXJob ``kubeflow.org/v1``: see :mod:`.types`, :mod:`.constants`, :mod:`.defaults`."""
