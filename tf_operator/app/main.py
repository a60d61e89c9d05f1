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
from dataclasses import Field, fields
from typing import Any

import click

from tf_operator import version
from tf_operator.app.options import (
    ServerOption,
    flag_of,
    format_go_duration,
    options_from_params,
    parse_go_duration,
)

API_VERSION = "v1"

# glog's flags, registered by the Go binary: accepted for compatibility, hidden, ignored
# (``--v`` is ServerOption.log_verbosity).
_GLOG_FLAGS = (
    click.Option(["--logtostderr/--no-logtostderr"], default=True, hidden=True),
    click.Option(["--alsologtostderr/--no-alsologtostderr"], default=False, hidden=True),
    click.Option(["--stderrthreshold"], default="", hidden=True),
    click.Option(["--vmodule"], default="", hidden=True),
    click.Option(["--log_backtrace_at"], default="", hidden=True),
    click.Option(["--log_dir"], default="", hidden=True),
)


def _positive_names(declarations: Sequence[str]) -> list[str]:
    """``["--a/--no-a"]`` -> ``["a"]``."""
    return [d.split("/")[0].strip()[2:] for d in declarations if d.startswith("--")]


# Boolean flags that Go users may write as --name=true/false.
_BOOL_FLAGS = frozenset(
    [
        n
        for f in fields(ServerOption)
        if flag_of(f).kind == "bool"
        for n in _positive_names(flag_of(f).names)
    ]
    + [n for option in _GLOG_FLAGS if option.is_bool_flag for n in _positive_names(option.opts)]
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


class GoDuration(click.ParamType):  # type: ignore[type-arg]  # generic only in newer click; the base must work with click 8.1
    """A click parameter holding a Go duration string, converted to float seconds."""

    name = "duration"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
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


def _option(f: Field[Any]) -> click.Option:
    """The click option of one ServerOption field (see ``options.Flag``)."""
    spec = flag_of(f)
    kw: dict[str, Any] = {"default": f.default, "help": spec.help or None, "hidden": spec.hidden}
    if spec.show_default:
        kw["show_default"] = True
    if spec.kind == "int":
        kw["type"] = int if spec.low is None else click.IntRange(spec.low, spec.high)
    elif spec.kind == "bool":
        kw["is_flag"] = True
    elif spec.kind == "choice":
        kw["type"] = click.Choice(spec.choices)
    elif spec.kind == "choices":
        kw.update(type=click.Choice(spec.choices, case_sensitive=False), multiple=True)
    elif spec.kind == "duration":
        assert isinstance(f.default, float)
        default = format_go_duration(f.default)
        kw.update(
            type=DURATION, default=default, help=f"{spec.help} (Go duration, default {default})"
        )
    return click.Option([*spec.names, f.name], **kw)


def _run(**params: Any) -> None:
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


cli = click.Command(
    name="tf-operator",
    callback=_run,
    params=[*(_option(f) for f in fields(ServerOption)), *_GLOG_FLAGS],
    help=_run.__doc__,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _exit_now(code: int) -> None:
    """Exit without waiting for stray non-daemon threads (watch streams, workers).

    The server has already drained the controller and released the lock; this keeps shutdown
    within the probe/termination budget however third-party threads behave.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


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
