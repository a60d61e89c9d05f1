"""A Kubernetes API server emulator: the in-process ``Registry`` plus an HTTP(S) front end.

Layout, each layer importing only those below it (an import-linter contract): ``server``
(``APIServer``: the assembly) over ``auth`` (authentication, RBAC, service-account admission)
over ``serving`` (HTTP, bodies, discovery, tables, streams, faults) over ``registry`` (the API's
write semantics) and ``scale`` over ``admission`` (decoding, defaulting, validation, CRD schemas
and CEL) and ``storage`` (store, watches, paging, garbage collection) over ``crds`` and
``resources`` (the resource types served); the shared vocabulary (``StatusError``, object
helpers, selectors, quantities, patches) is ``localcluster.apimachinery``.

``Registry`` (``registry.py`` over ``storage/store.py``) holds the objects and implements the API
semantics: one global resourceVersion, watch history with 410 Expired, selectors, pagination,
optimistic concurrency, status subresources, patches, finalizers, graceful pod deletion, CRDs and
garbage collection (``storage/gc.py``). Admission validates as kube-apiserver does: typed-decoding
errors (``admission/decoding.py``), names and pod specs (``admission/validation.py``), CRD
schemas (``admission/schema.py``) and CRD validation rules in CEL (``admission/celrules.py``).
``APIServer`` (``server.py``) serves it to kubectl 1.32, the
``kubernetes`` Python client and client-go: discovery (legacy and aggregated), OpenAPI v3 with
``fieldValidation``, Tables, chunked watches and logs, TLS with a bearer token, and fault
injection. ``StatusError`` is every API failure, carrying the full ``metav1.Status``.

Typical use::

    server = APIServer(port=0, watch_history=10000)
    server.start()
    server.registry.create(("", "v1", "configmaps"), "default", {"metadata": {"name": "x"}})
    ...  # point clients at server.url (server.token and server.cert_file with tls=True)
    server.stop()

Faults at run time: ``POST /_localcluster/faults`` with any of ``{"error_rate": 0.1,
"error_code": 500|429|503, "retry_after": 1, "latency_ms": 50, "drop_watches": true,
"compact": true, "match": {"user": ..., "methods": [...], "path_prefix": ...}}`` (validated:
400 for anything else); ``GET`` reads the settings (also ``server.faults.apply({...})`` in
process). ``request_user()`` tells a registry commit observer who made the request it commits.
"""

from localcluster.apimachinery.errors import StatusError
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.server import APIServer, request_user

__all__ = ["APIServer", "Registry", "StatusError", "request_user"]
