"""Kubelet emulation: node registration plus simulated or process container runtimes.

One ``Kubelet`` per node registers its Node (capacity, labels, Ready, a
heartbeat Lease), watches the pods bound to it, gives each a unique loopback
IP (``ipam``), reports PodStatus like a real kubelet (``podstatus``) and
finishes graceful deletions. The runtime decides what a container is:

Simulated (``simulated``) — timers on one heap per kubelet; pod annotations
(a ``.<container>`` suffix targets one container):
  ``localcluster.tf-operator.io/start-seconds``  delay before Running
  ``localcluster.tf-operator.io/run-seconds``    run time per attempt (absent: forever)
  ``localcluster.tf-operator.io/exit-code``      exit code, or "1,1,0" per restart

Process (``process``) — ``command`` + ``args`` (or a known image's entrypoint,
``images``) run as a local process group with the container env (fieldRef,
ConfigMap/Secret refs, ``KUBERNETES_SERVICE_*``), ``workingDir``, the pod's
volumes bind-mounted in a private mount namespace (``volumes``: the
service-account token at its standard path, ConfigMaps, Secrets, downward API),
probes (``probes``) and a log file per attempt served to
``kubectl logs [-f] [--previous]``. Restarts follow the kubelet's back-off
(``backoff``). Limits: init containers, resource limits, ``securityContext``
and ``timestamps=true`` logs are not emulated; pods share the host network
namespace, so two pods must not bind the same port on 0.0.0.0 (Python programs
are rebound to their pod IP by ``pyhook``; others must bind the pod IP, which
their own service name resolves to).

DNS (``dns``) — per-pod hosts files listing service names -> pod IPs, seen by
processes through a private mount namespace over /etc/hosts (root only) or a
Python ``sitecustomize`` resolver hook (Python programs only). No SRV
records, no DNS server (tools like ``nslookup``/``dig`` that bypass the libc
resolver see nothing), ClusterIP services resolve to one endpoint pod IP (no
kube-proxy: connect to the target port), and names appear a moment after the
Endpoints change (lookups must be retried, as in a real cluster).
"""

from localcluster.kubelet.ipam import IPAllocator
from localcluster.kubelet.kubelet import Kubelet
from localcluster.kubelet.node import NodeConfig
from localcluster.kubelet.process import ProcessRuntime
from localcluster.kubelet.simulated import (
    EXIT_CODE,
    RUN_SECONDS,
    START_SECONDS,
    SimulatedRuntime,
)
from localcluster.kubelet.timers import Clock, ManualClock, TimerQueue

__all__ = [
    "EXIT_CODE",
    "RUN_SECONDS",
    "START_SECONDS",
    "Clock",
    "IPAllocator",
    "Kubelet",
    "ManualClock",
    "NodeConfig",
    "ProcessRuntime",
    "SimulatedRuntime",
    "TimerQueue",
]
