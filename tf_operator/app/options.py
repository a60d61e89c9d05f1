"""Server options of the ``tf-operator`` binary, mirroring v0.5.3's ``app/options``.

`ServerOption` is the plain settings object that the CLI fills in and that the server and the
controller read; it carries no parsing logic of its own. Durations are stored as float seconds.
Go's flag package accepted duration strings such as ``30s`` or ``1h30m``;
`parse_go_duration` and `format_go_duration` translate between those and seconds so the flags
keep their v0.5.3 spelling and their printed defaults (``12h0m0s``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Defaults as in v0.5.3 (options.go / server.go) unless marked as an addition of this port.
DEFAULT_RESYNC_PERIOD = 12 * 3600.0
DEFAULT_MONITORING_PORT = 8443
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 5.0
DEFAULT_RETRY_PERIOD = 3.0
DEFAULT_LOCK_NAME = "tf-operator"
# v0.5.3 elected through an Endpoints lock; keeping it lets this port coexist with Go replicas
# during a migration. "leases" is the modern choice and is accepted too.
DEFAULT_LOCK_TYPE = "endpoints"
LOCK_TYPES = ("endpoints", "leases")
# The elector jitters retries by up to this factor, so renewals must fit in the deadline.
LEADER_ELECTION_JITTER = 1.2
GANG_SCHEDULERS = ("kube-batch", "volcano")
DEFAULT_GANG_SCHEDULER = "kube-batch"

# Environment variables read by the process.
ENV_KUBEFLOW_NAMESPACE = "KUBEFLOW_NAMESPACE"
ENV_KUBECONFIG = "KUBECONFIG"
DEFAULT_LOCK_NAMESPACE = "default"


@dataclass
class ServerOption:
    """Everything the operator process is configured with (flags of v0.5.3 plus additions)."""

    master: str = ""
    kubeconfig: str = ""  # addition: v0.5.3 read only the KUBECONFIG variable
    namespace: str = ""  # "" = all namespaces
    threadiness: int = 1
    print_version: bool = False
    json_log_format: bool = True
    enable_gang_scheduling: bool = False
    gang_scheduler_name: str = DEFAULT_GANG_SCHEDULER  # addition: kube-batch | volcano
    monitoring_port: int = DEFAULT_MONITORING_PORT
    monitoring_address: str = "0.0.0.0"  # addition: Go listened on ":<port>"
    resync_period: float = DEFAULT_RESYNC_PERIOD
    # Leader election: fixed in v0.5.3, tunable here.
    leader_elect: bool = True
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    lock_type: str = DEFAULT_LOCK_TYPE
    lock_name: str = DEFAULT_LOCK_NAME
    log_verbosity: int = 0  # glog's --v; >= 4 switches to debug level

    def validate(self) -> list[str]:
        """Return human-readable problems with the settings (empty when usable)."""
        problems = []
        if self.threadiness < 1:
            problems.append("--threadiness must be at least 1")
        if not 0 <= self.monitoring_port <= 65535:
            problems.append("--monitoring-port must be between 0 and 65535")
        if self.resync_period < 0:
            problems.append("--resyc-period must not be negative")
        if self.gang_scheduler_name not in GANG_SCHEDULERS:
            problems.append(f"--gang-scheduler-name must be one of {', '.join(GANG_SCHEDULERS)}")
        if self.lock_type not in LOCK_TYPES:
            problems.append(f"--leader-elect-resource-lock must be one of {', '.join(LOCK_TYPES)}")
        if self.leader_elect:
            if not self.lease_duration > self.renew_deadline > 0:
                problems.append("leader election needs lease duration > renew deadline > 0")
            if not 0 < self.retry_period * LEADER_ELECTION_JITTER < self.renew_deadline:
                problems.append(
                    "leader election needs 0 < retry period x "
                    f"{LEADER_ELECTION_JITTER} < renew deadline"
                )
        return problems


_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Parse a Go duration string (``300ms``, ``1.5h``, ``2h45m``, ``-1m``, ``0``) into seconds.

    Raises ValueError for anything Go's ``time.ParseDuration`` would reject, including a bare
    number other than ``0``.
    """
    value = text.strip()
    sign = 1.0
    if value[:1] in "+-" and value:
        sign = -1.0 if value[0] == "-" else 1.0
        value = value[1:]
    if value == "0":
        return 0.0
    if not value:
        raise ValueError(f"invalid duration {text!r}")
    total = 0.0
    pos = 0
    while pos < len(value):
        match = _DURATION_PART.match(value, pos)
        if match is None:
            raise ValueError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return sign * total


def format_go_duration(seconds: float) -> str:
    """Format seconds the way Go prints a ``time.Duration`` (``12h0m0s``, ``1m30s``, ``500ms``)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds < 1:
        for unit, scale in (("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
            if seconds >= scale:
                return f"{sign}{_trim(seconds / scale)}{unit}"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = sign
    if hours:
        out += f"{int(hours)}h"
    if hours or minutes:
        out += f"{int(minutes)}m"
    return f"{out}{_trim(secs)}s"


def _trim(number: float) -> str:
    text = f"{number:.9f}".rstrip("0").rstrip(".")
    return text or "0"
