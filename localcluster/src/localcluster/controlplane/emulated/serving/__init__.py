"""The emulator's HTTP(S) face: the lean HTTP/1.1 server (``httpcore``), request bodies and
parameters (``params``: JSON, ``yamlbody``, ``protobuf``), ``discovery`` and OpenAPI, ``tables``,
the streamed replies (``streams``: watches, pod logs), ``tls`` certificates, ``kubeconfig``
documents, per-client ``request_metrics`` and injected ``faults``. ``server.APIServer`` wires them
with ``auth`` in front of the ``Registry``.
"""
