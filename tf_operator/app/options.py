"""Server options of the ``tf-operator`` binary, mirroring v0.5.3's ``app/options``.

`ServerOption` is the settings object that the CLI fills in and that the server and the
controller read. Each field declares its flag (:func:`flag`), so the flags are declared once:
the click command is built from the fields and :func:`options_from_params` fills them by
name. Durations are stored as float seconds. Go's flag package accepted duration strings such
as ``30s`` or ``1h30m``; `parse_go_duration` and `format_go_duration` translate between those
and seconds so the flags keep their v0.5.3 spelling and their printed defaults (``12h0m0s``).
"""

from __future__ import annotations

import re
from dataclasses import Field, dataclass, field, fields
from typing import Any

from tf_operator.apis.common.v1.run_policy import DEFAULTS, V0_5_3

# Defaults as in v0.5.3 (options.go / server.go) unless marked as an addition of this port.
DEFAULT_RESYNC_PERIOD = 12 * 3600.0
DEFAULT_MONITORING_PORT = 8443
DEFAULT_LEASE_DURATION = 15.0
# v0.5.3 hard-coded 15 s / 5 s / 3 s: two renewal attempts per round, so a steady error rate
# cost the leader its lease (and the process) every few minutes. Kubernetes' own components
# use 10 s / 2 s: five attempts within the same 15 s lease (divergence D43).
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
DEFAULT_LOCK_NAME = "tf-operator"
# v0.5.3 elected through an Endpoints lock; keeping it lets this port coexist with Go replicas
# during a migration. "leases" is the modern choice; "endpointsleases" holds both (client-go's
# migration lock): run it while moving from one to the other, since an "endpoints" replica
# and a "leases" replica share no lock object and would both lead.
DEFAULT_LOCK_TYPE = "endpoints"
LOCK_TYPES = ("endpoints", "leases", "endpointsleases")
# The elector jitters retries by up to this factor, so renewals must fit in the deadline.
LEADER_ELECTION_JITTER = 1.2
GANG_SCHEDULERS = ("kube-batch", "volcano", "scheduler-plugins")
_DNS_1123_SUBDOMAIN = re.compile(
    r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
DEFAULT_GANG_SCHEDULER = "kube-batch"
# The releases whose defaults a job can get.
DEFAULTS_RELEASES = tuple(DEFAULTS)
DEFAULT_DEFAULTS = V0_5_3

# The job kinds the binary knows (tf_operator.controller.v1.registry; a test keeps the two
# equal) and the ones it runs unless --enable-scheme says otherwise: TFJob only, so v0.5.3's
# command line runs v0.5.3's operator (training-operator v1.9 enabled every kind: D80).
KNOWN_SCHEMES = ("tfjob", "pytorchjob", "xgboostjob", "jaxjob", "paddlejob")
DEFAULT_SCHEMES = ("tfjob",)

# Pod status updates of one job within this period are synced together (divergence D51), as
# Kubernetes' job controller does with its fixed one-second batch.
DEFAULT_POD_UPDATES_BATCH_PERIOD = 1.0

# Environment variables read by the process.
ENV_KUBEFLOW_NAMESPACE = "KUBEFLOW_NAMESPACE"
ENV_KUBECONFIG = "KUBECONFIG"
DEFAULT_LOCK_NAMESPACE = "default"


@dataclass(frozen=True)
class Flag:
    """How one :class:`ServerOption` field appears on the command line.

    ``names`` are click's declarations (``"--a/--no-a"`` for a boolean pair); ``kind`` is
    ``text``, ``int``, ``bool``, ``duration`` (a Go duration string, stored as seconds),
    ``choice`` (from ``choices``) or ``choices`` (repeatable, any case, stored as a tuple of
    the choices named, each once); ``low``/``high`` bound an ``int``.
    """

    names: tuple[str, ...]
    help: str = ""
    kind: str = "text"
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None
    show_default: bool = False
    hidden: bool = False


def flag(default: Any, *names: str, **spec: Any) -> Any:
    """A dataclass field declaring its default and its flag (see :class:`Flag`)."""
    return field(default=default, metadata={"flag": Flag(names, **spec)})


def flag_of(f: Field[Any]) -> Flag:
    spec = f.metadata["flag"]
    assert isinstance(spec, Flag)
    return spec


@dataclass
class ServerOption:
    """Everything the operator process is configured with (flags of v0.5.3 plus additions).

    Each field is declared once, with its flag: the ``tf-operator`` command is built from
    these fields in this order (``tf_operator.app.main``), and parsing fills them by name.
    """

    master: str = flag(
        "",
        "--master",
        help="URL of the Kubernetes API server; overrides the kubeconfig's server. "
        "Only needed out of cluster.",
    )
    # Addition: v0.5.3 read only the KUBECONFIG variable.
    kubeconfig: str = flag(
        "",
        "--kubeconfig",
        help="Path to a kubeconfig file. The KUBECONFIG environment variable wins over this "
        "flag. In-cluster configuration is used when neither this nor --master is given.",
    )
    namespace: str = flag(
        "",
        "--namespace",
        help="Namespace to watch for TFJobs, pods and services; empty watches all namespaces.",
    )
    # Addition (training-operator v1.9's flag): which job kinds to run, one controller each.
    enable_scheme: tuple[str, ...] = flag(
        DEFAULT_SCHEMES,
        "--enable-scheme",
        kind="choices",
        choices=KNOWN_SCHEMES,
        show_default=True,
        help="Run the controller of this job kind; repeat for several (--enable-scheme tfjob "
        "--enable-scheme pytorchjob), any case. Default: tfjob only.",
    )
    threadiness: int = flag(
        1, "--threadiness", kind="int", low=1, help="Worker threads (of each kind's controller)."
    )
    print_version: bool = flag(False, "--version", kind="bool", help="Show version and quit.")
    json_log_format: bool = flag(
        True,
        "--json-log-format/--no-json-log-format",
        kind="bool",
        help="JSON log lines (default); --json-log-format=false or --no-json-log-format for text.",
    )
    enable_gang_scheduling: bool = flag(
        False,
        "--enable-gang-scheduling/--no-enable-gang-scheduling",
        kind="bool",
        help="Create a PodGroup per job and schedule its pods with the gang scheduler.",
    )
    # Addition: kube-batch (v0.5.3's), volcano, or scheduler-plugins (training-operator
    # v1.9's default backend); any other name is a scheduler-plugins profile of that name, as
    # in v1.9 (D75).
    gang_scheduler_name: str = flag(
        DEFAULT_GANG_SCHEDULER,
        "--gang-scheduler-name",
        show_default=True,
        help="Gang scheduler used when gang scheduling is enabled: kube-batch, volcano or "
        "scheduler-plugins (pods get schedulerName scheduler-plugins-scheduler); any other "
        "name is taken as a scheduler-plugins profile of that name.",
    )
    monitoring_port: int = flag(
        DEFAULT_MONITORING_PORT,
        "--monitoring-port",
        kind="int",
        low=0,
        high=65535,
        show_default=True,
        help="Port of the HTTP endpoint serving /metrics, /healthz and /readyz "
        "(0 picks a free one).",
    )
    # Addition: Go listened on ":<port>".
    monitoring_address: str = flag(
        "0.0.0.0",
        "--monitoring-address",
        show_default=True,
        help="Address the monitoring endpoint listens on.",
    )
    resync_period: float = flag(
        DEFAULT_RESYNC_PERIOD,
        "--resyc-period",
        "--resync-period",
        kind="duration",
        help="Resync interval of the pod and service informers",
    )
    # Addition: v0.5.3 synced a job on every update of one of its pods (divergence D51).
    pod_updates_batch_period: float = flag(
        DEFAULT_POD_UPDATES_BATCH_PERIOD,
        "--pod-updates-batch-period",
        kind="duration",
        help="Sync a job at most once per this period for updates of its pods (0: on every "
        "update, as v0.5.3 did). Creations and deletions of pods are synced at once.",
    )
    # Addition: where training-operator v1.9 changed a v0.5.3 default (divergences D56-D60).
    defaults: str = flag(
        DEFAULT_DEFAULTS,
        "--defaults",
        kind="choice",
        choices=DEFAULTS_RELEASES,
        show_default=True,
        help="Whose defaults a job gets where training-operator v1.9 changed v0.5.3's "
        "(cleanPodPolicy, retryable exit codes, the worker-0 rule, Evaluator and single-replica "
        "TF_CONFIG). A job's annotation tf-operator.kubeflow.org/defaults overrides it.",
    )
    # Leader election: fixed in v0.5.3, tunable here.
    leader_elect: bool = flag(
        True,
        "--leader-elect/--no-leader-elect",
        kind="bool",
        help="Elect a leader among replicas before running the controller (default on).",
    )
    lease_duration: float = flag(
        DEFAULT_LEASE_DURATION,
        "--leader-elect-lease-duration",
        kind="duration",
        help="How long a non-leader waits before taking over",
    )
    renew_deadline: float = flag(
        DEFAULT_RENEW_DEADLINE,
        "--leader-elect-renew-deadline",
        kind="duration",
        help="How long the leader retries renewing",
    )
    retry_period: float = flag(
        DEFAULT_RETRY_PERIOD,
        "--leader-elect-retry-period",
        kind="duration",
        help="Wait between election attempts",
    )
    lock_type: str = flag(
        DEFAULT_LOCK_TYPE,
        "--leader-elect-resource-lock",
        kind="choice",
        choices=LOCK_TYPES,
        show_default=True,
        help="Kind of object holding the leader lock.",
    )
    lock_name: str = flag(
        DEFAULT_LOCK_NAME,
        "--leader-elect-resource-name",
        show_default=True,
        help="Name of the lock object (in the namespace from KUBEFLOW_NAMESPACE, else default).",
    )
    # glog's --v; >= 4 switches to debug level.
    log_verbosity: int = flag(0, "--v", kind="int", hidden=True)

    def validate(self) -> list[str]:
        """Return human-readable problems with the settings (empty when usable)."""
        problems = []
        if self.threadiness < 1:
            problems.append("--threadiness must be at least 1")
        if not 0 <= self.monitoring_port <= 65535:
            problems.append("--monitoring-port must be between 0 and 65535")
        if self.resync_period < 0:
            problems.append("--resyc-period must not be negative")
        if self.pod_updates_batch_period < 0:
            problems.append("--pod-updates-batch-period must not be negative")
        unknown = [s for s in self.enable_scheme if s.lower() not in KNOWN_SCHEMES]
        if unknown or not self.enable_scheme:
            problems.append(f"--enable-scheme must name some of {', '.join(KNOWN_SCHEMES)}")
        if not _DNS_1123_SUBDOMAIN.fullmatch(self.gang_scheduler_name):
            problems.append(
                f"--gang-scheduler-name must be {', '.join(GANG_SCHEDULERS)} or another "
                "scheduler name (a DNS-1123 subdomain, as a pod's schedulerName must be)"
            )
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
            elif self.lease_duration <= self.renew_deadline + self.retry_period:
                # A leader leads until a retry period plus the renew deadline after its last
                # renewal began; a standby may take over a lease duration after reading it.
                problems.append(
                    "leader election needs lease duration > renew deadline + retry period"
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


def options_from_params(params: dict[str, Any]) -> ServerOption:
    """A `ServerOption` from click's parsed parameters (named after the fields); a repeated
    flag's values each once, in order."""
    values = {f.name: params[f.name] for f in fields(ServerOption)}
    for f in fields(ServerOption):
        if flag_of(f).kind == "choices":
            values[f.name] = tuple(dict.fromkeys(v.lower() for v in values[f.name]))
    return ServerOption(**values)
