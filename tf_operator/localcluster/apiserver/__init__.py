"""A Kubernetes API server emulator: in-process ``Registry`` plus an HTTP front end.

``Registry`` holds the objects and implements the API semantics; ``APIServer`` serves it over
HTTP(S) to kubectl, the Python client and client-go. ``StatusError`` is every API failure.
"""

from .errors import StatusError
from .registry import Registry

__all__ = ["APIServer", "Registry", "StatusError"]


def __getattr__(name: str):  # the HTTP layer is imported lazily
    if name == "APIServer":
        from .server import APIServer

        return APIServer
    raise AttributeError(name)
