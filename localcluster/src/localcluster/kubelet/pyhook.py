"""The ``sitecustomize`` every Python process of a process pod starts with.

Process pods share the host's network namespace, each with its own loopback IP. Two hooks
make Python programs behave as in their own pod:

- binding the wildcard address (``0.0.0.0``, ``::`` or ``""``) binds the pod's IP instead
  (``LOCALCLUSTER_POD_IP``), as a server in a pod listens on the pod's interface, so two pods
  (or two clusters) can serve the same port, e.g. two operators' ``--monitoring-port=8443``;
- with the ``python`` DNS mode, cluster names resolve through the pod's hosts file
  (``dns.SITECUSTOMIZE``).

Non-Python programs get neither: they must bind their pod IP themselves.
"""

from __future__ import annotations

import os

from localcluster.kubelet.dns import SITECUSTOMIZE as DNS_HOOK

POD_IP_ENV = "LOCALCLUSTER_POD_IP"

BIND_HOOK = """
# localcluster bind hook: the wildcard address means the pod's own IP (generated)
_POD_IP = _os.environ.get("LOCALCLUSTER_POD_IP")
_WILDCARDS = ("", "0.0.0.0", "::", "::0")
_bind = _socket.socket.bind


def _pod_bind(self, address):
    if _POD_IP and isinstance(address, tuple) and address and address[0] in _WILDCARDS:
        if self.family == _socket.AF_INET:
            address = (_POD_IP, *address[1:])
    return _bind(self, address)


_socket.socket.bind = _pod_bind
"""

SITECUSTOMIZE = DNS_HOOK + BIND_HOOK


def write_hook(directory: str) -> str:
    """Write the hook into ``directory`` (created) and return the directory for PYTHONPATH."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w") as handle:
        handle.write(SITECUSTOMIZE)
    return directory
