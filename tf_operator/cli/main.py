"""``tfjob``: submit, list, describe, follow, suspend, resume and delete TFJobs from a shell;
``pytorchjob``, ``xgboostjob``, ``jaxjob`` and ``paddlejob``: the same commands for each of
training-operator v1.9's other kinds this operator runs.

Installed as console scripts: ``tfjob`` and ``kubectl-tfjob`` (so ``kubectl tfjob ...``
works once the script is on PATH: kubectl runs any ``kubectl-<name>`` executable it finds
there as the subcommand ``<name>``), and likewise ``<kind>`` and ``kubectl-<kind>`` for
``pytorchjob``, ``xgboostjob``, ``jaxjob`` and ``paddlejob``: one program
told its kind by the script that starts it. Everything goes through the SDK's
:class:`~tf_operator.sdk.client.JobClient` of that kind; the
cluster is found as kubectl finds it (``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``,
in-cluster). API errors are printed as kubectl prints them and exit 1; ``wait`` (and
``submit --wait``) exits 0 when the job Succeeded, 1 when it Failed, 2 on timeout.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
import yaml

from tf_operator.cli import examples
from tf_operator.cli.describe import describe
from tf_operator.cli.output import OUTPUT_FORMATS, job_rows, render_jobs, render_objects, table
from tf_operator.cli.progress import ProgressView
from tf_operator.k8s.client import ConfigError
from tf_operator.k8s.safeyaml import load
from tf_operator.sdk import ApiError, Invalid, JobClient, NotFound, WaitTimeout, load_job
from tf_operator.sdk.conditions import is_finished, is_succeeded, job_state
from tf_operator.sdk.kinds import JAXJOB, PADDLEJOB, PYTORCHJOB, TFJOB, XGBOOSTJOB, JobKindInfo
from tf_operator.sdk.runpolicy import (
    is_managed_elsewhere,
    managed_by,
    queue_name,
    suspend_requested,
)
from tf_operator.version import __version__

EXIT_SUCCEEDED, EXIT_FAILED, EXIT_TIMEOUT = 0, 1, 2

P = ParamSpec("P")
R = TypeVar("R")


class Settings:
    """The global options; the client is made on first use (``--help`` needs no cluster)."""

    def __init__(
        self,
        kubeconfig: str | None,
        context: str | None,
        namespace: str | None,
        kind: JobKindInfo = TFJOB,
    ):
        self.kubeconfig = kubeconfig
        self.context = context
        self.namespace_flag = namespace
        self.kind = kind
        self._client: JobClient | None = None

    @property
    def client(self) -> JobClient:
        if self._client is None:
            self._client = JobClient(
                self.kubeconfig, namespace=self.namespace_flag, context=self.context, kind=self.kind
            )
        return self._client

    @property
    def namespace(self) -> str:
        return self.client.namespace


def api_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Print API and config errors the way kubectl does, and exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except ApiError as err:
            if not err.status:
                raise click.ClickException(f"unable to connect to the server: {err}") from err
            click.echo(f"Error from server ({err.reason or err.status}): {err.message}", err=True)
            if isinstance(err, Invalid):
                for cause in err.causes:
                    click.echo(f"  {cause}", err=True)
            sys.exit(1)
        except (OSError, ValueError, ConfigError, yaml.YAMLError) as err:  # files, YAML, config
            raise click.ClickException(" ".join(str(err).split())) from err  # one line

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", envvar=None, help="Path to the kubeconfig file.")
@click.option("--context", help="The kubeconfig context to use.")
@click.option("-n", "--namespace", help="Namespace (default: the context's namespace).")
@click.version_option(__version__, prog_name="tfjob")
@click.pass_context
def cli(
    ctx: click.Context, kubeconfig: str | None, context: str | None, namespace: str | None
) -> None:
    """Work with training jobs (kubeflow.org/v1) on the current cluster: TFJobs with
    ``tfjob``, PyTorchJobs with ``pytorchjob``, XGBoostJobs with ``xgboostjob``, JAXJobs with
    ``jaxjob``, PaddleJobs with ``paddlejob``."""
    kind = ctx.obj if isinstance(ctx.obj, JobKindInfo) else TFJOB  # the script's kind
    settings = Settings(kubeconfig, context, namespace, kind)
    ctx.obj = settings
    ctx.call_on_close(lambda: settings._client.close() if settings._client else None)


pass_settings = click.make_pass_decorator(Settings)


def wait_with_progress(client: JobClient, name: str, timeout: float) -> int:
    """Wait showing live progress; the exit code for the outcome."""
    with ProgressView(sys.stdout) as view:
        try:
            job = client.wait_for_job(name, timeout=timeout, callback=view.update)
        except WaitTimeout as err:
            view.close()
            click.echo(f"error: timed out: {err}", err=True)
            return EXIT_TIMEOUT
    click.echo(f"{client.kind.noun}/{name} {job_state(job).lower()}")
    return EXIT_SUCCEEDED if is_succeeded(job) else EXIT_FAILED


@cli.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--example",
    type=click.Choice(sorted(examples.EXAMPLES)),
    help="Submit a built-in example instead of a file.",
)
@click.option("--name", help="Override metadata.name.")
@click.option("--wait", is_flag=True, help="Wait for the job to finish, showing progress.")
@click.option("--timeout", default=3600.0, show_default=True, help="Seconds --wait waits.")
@click.option("-o", "--output", type=click.Choice(["yaml", "json", "name"]))
@pass_settings
@api_errors
def submit(
    settings: Settings,
    file: str | None,
    example: str | None,
    name: str | None,
    wait: bool,
    timeout: float,
    output: str | None,
) -> None:
    """Create a TFJob from FILE (YAML, '-' for stdin) or a built-in --example."""
    if (file is None) == (example is None):
        raise click.UsageError("give exactly one of FILE or --example")
    if example is not None:
        job = examples.example(example)
    elif file == "-":
        job = load_job(_yaml_stdin(), settings.kind)
    else:
        job = load_job(Path(file or ""), settings.kind)
    if name:
        job.setdefault("metadata", {})["name"] = name
    created = settings.client.create(job, namespace=settings.namespace_flag)
    job_name = created["metadata"]["name"]
    if output in ("yaml", "json"):
        click.echo(render_objects(created, output))
    else:
        click.echo(f"{settings.kind.noun}/{job_name}" + ("" if output == "name" else " created"))
    if wait:
        sys.exit(wait_with_progress(settings.client, job_name, timeout))


def _yaml_stdin() -> dict[str, Any]:
    loaded: dict[str, Any] = load(sys.stdin.read())  # aliases bounded
    return loaded


@cli.command(name="list")
@click.option("-A", "--all-namespaces", is_flag=True, help="List TFJobs in every namespace.")
@click.option("-l", "--selector", help="Label selector, e.g. team=vision.")
@click.option("-w", "--watch", is_flag=True, help="After listing, print changes as they happen.")
@click.option("-o", "--output", type=click.Choice(OUTPUT_FORMATS))
@pass_settings
@api_errors
def list_jobs(
    settings: Settings, all_namespaces: bool, selector: str | None, watch: bool, output: str | None
) -> None:
    """List TFJobs with their state."""
    client = settings.client
    if not watch:
        jobs = client.list(label_selector=selector, all_namespaces=all_namespaces)
        if not jobs and output not in ("yaml", "json"):
            where = "" if all_namespaces else f" in {client.namespace} namespace"
            click.echo(f"No resources found{where}.", err=True)
            return
        click.echo(render_jobs(jobs, output, all_namespaces, settings.kind.noun))
        return
    if output in ("yaml", "json", "name"):
        raise click.UsageError("--watch prints tables only (default or -o wide)")
    header = True
    try:
        for _, job in client.watch(label_selector=selector, all_namespaces=all_namespaces):
            headers, rows = job_rows([job], output == "wide", all_namespaces)
            lines = table(headers, rows).splitlines()
            click.echo("\n".join(lines if header else lines[1:]))
            header = False
    except KeyboardInterrupt:
        pass


@cli.command(name="describe")
@click.argument("name")
@pass_settings
@api_errors
def describe_job(settings: Settings, name: str) -> None:
    """Show a TFJob: replicas (pod, node, phase, restarts, exit code), conditions, events."""
    client = settings.client
    job = client.get(name)
    click.echo(describe(job, client.get_pods(name), client.get_events(name), kind=client.kind))


@cli.command()
@click.argument("name")
@click.option("--replica", "replica_type", help="Replica type: ps, worker, chief, master, ...")
@click.option("--index", type=int, help="Replica index (with --replica).")
@click.option("-f", "--follow", is_flag=True, help="Stream the logs while the pods run.")
@click.option("--tail", type=int, help="Lines of recent log to show per pod.")
@click.option("--prefix/--no-prefix", default=None, help="Prefix lines with the pod name.")
@pass_settings
@api_errors
def logs(
    settings: Settings,
    name: str,
    replica_type: str | None,
    index: int | None,
    follow: bool,
    tail: int | None,
    prefix: bool | None,
) -> None:
    """Print the logs of a TFJob's pods (all of them unless --replica/--index narrow it)."""
    client = settings.client
    if not follow and not client.get_pod_names(name, replica_type=replica_type, index=index):
        client.get(name)  # NotFound for a missing job rather than silence
        raise click.ClickException(f"TFJob {name} has no pods matching the selection yet")
    if prefix is None:
        prefix = not (replica_type and index is not None)
    try:
        for pod, line in client.get_logs(
            name, replica_type=replica_type, index=index, follow=follow, tail_lines=tail
        ):
            click.echo(f"[{pod}] {line}" if prefix else line)
    except KeyboardInterrupt:
        pass
    except WaitTimeout as err:
        raise click.ClickException(str(err)) from err


@cli.command(name="wait")
@click.argument("name")
@click.option("--timeout", default=3600.0, show_default=True, help="Seconds to wait.")
@pass_settings
@api_errors
def wait_job(settings: Settings, name: str, timeout: float) -> None:
    """Wait for a TFJob to finish: exit 0 if it Succeeded, 1 if it Failed, 2 on timeout."""
    sys.exit(wait_with_progress(settings.client, name, timeout))


def _set_suspend(settings: Settings, names: tuple[str, ...], suspend: bool) -> None:
    """Suspend or resume each job; exit 1 if any could not be (missing, or finished)."""
    verb = "suspended" if suspend else "resumed"
    failed = False
    for name in names:
        try:
            job = settings.client.get(name)
        except NotFound as err:
            click.echo(f"Error from server (NotFound): {err.message}", err=True)
            failed = True
            continue
        if is_finished(job):
            click.echo(
                f"error: {settings.kind.noun}/{name} has {job_state(job)}: "
                f"a finished job cannot be {verb}",
                err=True,
            )
            failed = True
            continue
        if suspend_requested(job) == suspend:
            click.echo(
                f"{settings.kind.noun}/{name} "
                + ("already suspended" if suspend else "not suspended")
            )
            continue
        if is_managed_elsewhere(job):
            click.echo(
                f"note: {name} is managed by {managed_by(job)}: that controller acts on it, "
                "not this operator",
                err=True,
            )
        elif (queue := queue_name(job)) is not None:
            click.echo(
                f"note: {name} is queued in Kueue (LocalQueue {queue}), which admits and "
                "evicts it by this same field and may undo this",
                err=True,
            )
        if suspend:
            settings.client.suspend(name)
        else:
            settings.client.resume(name)
        click.echo(f"{settings.kind.noun}/{name} {verb}")
    if failed:
        sys.exit(1)


@cli.command()
@click.argument("names", nargs=-1, required=True)
@pass_settings
@api_errors
def suspend(settings: Settings, names: tuple[str, ...]) -> None:
    """Suspend TFJobs: their pods and services are deleted until they are resumed
    (spec.runPolicy.suspend)."""
    _set_suspend(settings, names, True)


@cli.command()
@click.argument("names", nargs=-1, required=True)
@pass_settings
@api_errors
def resume(settings: Settings, names: tuple[str, ...]) -> None:
    """Resume suspended TFJobs: their pods are created again, with a fresh start time."""
    _set_suspend(settings, names, False)


@cli.command()
@click.argument("names", nargs=-1, required=True)
@click.option(
    "--cascade",
    type=click.Choice(["background", "foreground", "orphan"]),
    default="background",
    show_default=True,
    help="What happens to the job's pods and services.",
)
@pass_settings
@api_errors
def delete(settings: Settings, names: tuple[str, ...], cascade: str) -> None:
    """Delete TFJobs (their pods and services go with them)."""
    failed = False
    for name in names:
        try:
            settings.client.delete(name, propagation=cascade.capitalize())
            click.echo(f'{settings.kind.noun} "{name}" deleted')
        except NotFound as err:
            click.echo(f"Error from server (NotFound): {err.message}", err=True)
            failed = True
    if failed:
        sys.exit(1)


def main() -> None:
    cli(prog_name="tfjob", obj=TFJOB)


def kubectl_main() -> None:
    """The ``kubectl-tfjob`` plugin: the same commands, named as kubectl shows them."""
    cli(prog_name="kubectl tfjob", obj=TFJOB)


def pytorch_main() -> None:
    """``pytorchjob``: the same commands for PyTorchJobs."""
    cli(prog_name="pytorchjob", obj=PYTORCHJOB)


def kubectl_pytorch_main() -> None:
    """The ``kubectl-pytorchjob`` plugin."""
    cli(prog_name="kubectl pytorchjob", obj=PYTORCHJOB)


def xgboost_main() -> None:
    """``xgboostjob``: the same commands for XGBoostJobs."""
    cli(prog_name="xgboostjob", obj=XGBOOSTJOB)


def kubectl_xgboost_main() -> None:
    """The ``kubectl-xgboostjob`` plugin."""
    cli(prog_name="kubectl xgboostjob", obj=XGBOOSTJOB)


def jax_main() -> None:
    """``jaxjob``: the same commands for JAXJobs."""
    cli(prog_name="jaxjob", obj=JAXJOB)


def kubectl_jax_main() -> None:
    """The ``kubectl-jaxjob`` plugin."""
    cli(prog_name="kubectl jaxjob", obj=JAXJOB)


def paddle_main() -> None:
    """``paddlejob``: the same commands for PaddleJobs."""
    cli(prog_name="paddlejob", obj=PADDLEJOB)


def kubectl_paddle_main() -> None:
    """The ``kubectl-paddlejob`` plugin."""
    cli(prog_name="kubectl paddlejob", obj=PADDLEJOB)
