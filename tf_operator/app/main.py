"""The ``tf-operator`` command line, with v0.5.3's flag names, types and defaults.

v0.5.3 parsed its flags with Go's ``flag`` package, which accepts ``-flag`` as well as
``--flag`` and spells a false boolean as ``--flag=false``. Deployments written for the Go binary
pass flags that way, so `normalize_go_args` rewrites those spellings into click's
(``--flag`` / ``--no-flag``) before click parses them. glog's flags, which the Go binary also
registered, are accepted; only ``--v`` has an effect (4 or more selects debug logging).
"""

from __future__ import annotations

import logging
import os
import platform
import sys
from collections.abc import Sequence

import click

from tf_operator import version
from tf_operator.app.options import (
    DEFAULT_GANG_SCHEDULER,
    DEFAULT_LEASE_DURATION,
    DEFAULT_LOCK_NAME,
    DEFAULT_LOCK_TYPE,
    DEFAULT_MONITORING_PORT,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RESYNC_PERIOD,
    DEFAULT_RETRY_PERIOD,
    GANG_SCHEDULERS,
    LOCK_TYPES,
    ServerOption,
    format_go_duration,
    parse_go_duration,
)

API_VERSION = "v1"

# Boolean flags that Go users may write as --name=true/false.
_BOOL_FLAGS = frozenset(
    {
        "version",
        "json-log-format",
        "enable-gang-scheduling",
        "leader-elect",
        "logtostderr",
        "alsologtostderr",
    }
)
# strconv.ParseBool's accepted spellings.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def normalize_go_args(args: Sequence[str]) -> list[str]:
    """Rewrite Go-flag spellings (``-master=x``, ``--json-log-format=false``) for click."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            out.extend(args[index:])
            break
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[1].isalpha():
            arg = "-" + arg
        if arg.startswith("--") and "=" in arg:
            name, value = arg[2:].split("=", 1)
            if name in _BOOL_FLAGS:
                if value in _TRUE:
                    arg = f"--{name}"
                elif value in _FALSE:
                    arg = f"--no-{name}"
                else:
                    raise click.UsageError(
                        f'invalid boolean value "{value}" for -{name}: parse error'
                    )
        out.append(arg)
    return out


class GoDuration(click.ParamType):
    """A click parameter holding a Go duration string, converted to float seconds."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, int | float):
            return float(value)
        try:
            return parse_go_duration(str(value))
        except ValueError as err:
            self.fail(str(err), param, ctx)


DURATION = GoDuration()


def version_lines() -> list[str]:
    """The lines ``--version`` prints (same labels as v0.5.3, Python in place of Go)."""
    return [
        f"API Version: {API_VERSION}",
        f"Version: {version.__version__}",
        f"Git SHA: {os.environ.get('TF_OPERATOR_GIT_SHA') or 'Not provided.'}",
        f"Python Version: {platform.python_version()}",
        f"Python OS/Arch: {sys.platform}/{platform.machine()}",
    ]


def _duration_help(text: str, default: float) -> str:
    return f"{text} (Go duration, default {format_go_duration(default)})"


@click.command(
    name="tf-operator",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--master",
    default="",
    help="URL of the Kubernetes API server; overrides the kubeconfig's server. "
    "Only needed out of cluster.",
)
@click.option(
    "--kubeconfig",
    default="",
    help="Path to a kubeconfig file. The KUBECONFIG environment variable wins over this flag. "
    "In-cluster configuration is used when neither this nor --master is given.",
)
@click.option(
    "--namespace",
    default="",
    help="Namespace to watch for TFJobs, pods and services; empty watches all namespaces.",
)
@click.option("--threadiness", default=1, type=click.IntRange(min=1), help="Worker threads.")
@click.option("--version", "print_version", is_flag=True, help="Show version and quit.")
@click.option(
    "--json-log-format/--no-json-log-format",
    default=True,
    help="JSON log lines (default); --json-log-format=false or --no-json-log-format for text.",
)
@click.option(
    "--enable-gang-scheduling/--no-enable-gang-scheduling",
    default=False,
    help="Create a PodGroup per job and schedule its pods with the gang scheduler.",
)
@click.option(
    "--gang-scheduler-name",
    default=DEFAULT_GANG_SCHEDULER,
    type=click.Choice(GANG_SCHEDULERS),
    show_default=True,
    help="Gang scheduler backend used when gang scheduling is enabled.",
)
@click.option(
    "--monitoring-port",
    default=DEFAULT_MONITORING_PORT,
    type=click.IntRange(0, 65535),
    show_default=True,
    help="Port of the HTTP endpoint serving /metrics, /healthz and /readyz (0 picks a free one).",
)
@click.option(
    "--monitoring-address",
    default="0.0.0.0",
    show_default=True,
    help="Address the monitoring endpoint listens on.",
)
@click.option(
    "--resyc-period",
    "--resync-period",
    "resync_period",
    default=format_go_duration(DEFAULT_RESYNC_PERIOD),
    type=DURATION,
    help=_duration_help("Resync interval of the pod and service informers", DEFAULT_RESYNC_PERIOD),
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    help="Elect a leader among replicas before running the controller (default on).",
)
@click.option(
    "--leader-elect-lease-duration",
    default=format_go_duration(DEFAULT_LEASE_DURATION),
    type=DURATION,
    help=_duration_help("How long a non-leader waits before taking over", DEFAULT_LEASE_DURATION),
)
@click.option(
    "--leader-elect-renew-deadline",
    default=format_go_duration(DEFAULT_RENEW_DEADLINE),
    type=DURATION,
    help=_duration_help("How long the leader retries renewing", DEFAULT_RENEW_DEADLINE),
)
@click.option(
    "--leader-elect-retry-period",
    default=format_go_duration(DEFAULT_RETRY_PERIOD),
    type=DURATION,
    help=_duration_help("Wait between election attempts", DEFAULT_RETRY_PERIOD),
)
@click.option(
    "--leader-elect-resource-lock",
    default=DEFAULT_LOCK_TYPE,
    type=click.Choice(LOCK_TYPES),
    show_default=True,
    help="Kind of object holding the leader lock.",
)
@click.option(
    "--leader-elect-resource-name",
    default=DEFAULT_LOCK_NAME,
    show_default=True,
    help="Name of the lock object (in the namespace from KUBEFLOW_NAMESPACE, else default).",
)
# glog's flags, registered by the Go binary; accepted for compatibility.
@click.option("--v", "log_verbosity", default=0, type=int, hidden=True)
@click.option("--logtostderr/--no-logtostderr", default=True, hidden=True)
@click.option("--alsologtostderr/--no-alsologtostderr", default=False, hidden=True)
@click.option("--stderrthreshold", default="", hidden=True)
@click.option("--vmodule", default="", hidden=True)
@click.option("--log_backtrace_at", default="", hidden=True)
@click.option("--log_dir", default="", hidden=True)
def cli(**params: object) -> None:
    """Kubeflow TFJob operator (kubeflow.org/v1)."""
    opt = options_from_params(params)
    if opt.print_version:
        click.echo("\n".join(version_lines()))
        return
    problems = opt.validate()
    if problems:
        raise click.UsageError("; ".join(problems))
    from tf_operator.app import server  # heavy imports only when actually running

    _exit_now(server.run(opt))


def _exit_now(code: int) -> None:
    """Exit without waiting for stray non-daemon threads (watch streams, workers).

    The server has already drained the controller and released the lock; this keeps shutdown
    within the probe/termination budget however third-party threads behave.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def options_from_params(params: dict[str, object]) -> ServerOption:
    """Build a `ServerOption` from click's parsed parameters."""
    return ServerOption(
        master=str(params["master"]),
        kubeconfig=str(params["kubeconfig"]),
        namespace=str(params["namespace"]),
        threadiness=int(params["threadiness"]),  # type: ignore[arg-type]
        print_version=bool(params["print_version"]),
        json_log_format=bool(params["json_log_format"]),
        enable_gang_scheduling=bool(params["enable_gang_scheduling"]),
        gang_scheduler_name=str(params["gang_scheduler_name"]),
        monitoring_port=int(params["monitoring_port"]),  # type: ignore[arg-type]
        monitoring_address=str(params["monitoring_address"]),
        resync_period=float(params["resync_period"]),  # type: ignore[arg-type]
        leader_elect=bool(params["leader_elect"]),
        lease_duration=float(params["leader_elect_lease_duration"]),  # type: ignore[arg-type]
        renew_deadline=float(params["leader_elect_renew_deadline"]),  # type: ignore[arg-type]
        retry_period=float(params["leader_elect_retry_period"]),  # type: ignore[arg-type]
        lock_type=str(params["leader_elect_resource_lock"]),
        lock_name=str(params["leader_elect_resource_name"]),
        log_verbosity=int(params["log_verbosity"]),  # type: ignore[arg-type]
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: normalise Go-style flags, then run the click command."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args = normalize_go_args(args)
    except click.UsageError as err:
        err.show()
        sys.exit(err.exit_code)
    cli.main(args=args, prog_name="tf-operator")


if __name__ == "__main__":
    main()
