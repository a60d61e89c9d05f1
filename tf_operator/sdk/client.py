"""``TFJobClient`` and ``PyTorchJobClient``: jobs from Python, in the mould of the Kubeflow SDK's
clients; one :class:`JobClient` class serves both kinds (:mod:`tf_operator.sdk.kinds`).

Built on the project's own client (:mod:`tf_operator.k8s.client`): one connection pool, objects
as plain JSON dicts, errors narrowed to :mod:`tf_operator.sdk.errors`. Waiting is driven by a
watch on the one job (``fieldSelector=metadata.name=...``), resumed from the last
resourceVersion when the server ends it and relisted after ``410 Gone``, so a wait costs one
open request rather than a poll loop. Nothing here knows the operator's internals: pods are
found by the labels v0.5.3 puts on them (``tf-job-name``, ``tf-replica-type``,
``tf-replica-index``), which is also what ``kubectl`` users select on.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tf_operator.k8s import safeyaml
from tf_operator.k8s.client import EVENTS, PODS, KubeClient, ResourceClient, Timeout
from tf_operator.k8s.client.errors import (
    ApiError,
    from_status,
    is_resource_expired,
)
from tf_operator.sdk import conditions as cond
from tf_operator.sdk import runpolicy
from tf_operator.sdk.config import DEFAULT_NAMESPACE, connect
from tf_operator.sdk.errors import NotFound, WaitTimeout, translate
from tf_operator.sdk.follow import JobLogFollower
from tf_operator.sdk.kinds import (
    JAXJOB,
    PADDLEJOB,
    PYTORCHJOB,
    TFJOB,
    XGBOOSTJOB,
    JobKindInfo,
    replica_specs,
)
from tf_operator.sdk.logs import LogLine, LogStream

TFJOBS = TFJOB.resource
PYTORCHJOBS = PYTORCHJOB.resource
XGBOOSTJOBS = XGBOOSTJOB.resource
JAXJOBS = JAXJOB.resource
PADDLEJOBS = PADDLEJOB.resource

# The labels v0.5.3 puts on every pod and service of a TFJob.
LABEL_GROUP_NAME = TFJOB.group_name_label
LABEL_JOB_NAME = TFJOB.job_name_label
LABEL_REPLICA_TYPE = TFJOB.replica_type_label  # the replica type in lower case
LABEL_REPLICA_INDEX = TFJOB.replica_index_label

# A watch asks the server to end it after this long and is then resumed (kubectl uses ~30 min;
# shorter keeps a wait responsive to a server that silently dropped it).
WATCH_CHUNK_SECONDS = 300
LIST_PAGE_SIZE = 500
# How long get_logs(follow=True) waits for pods to exist and start before giving up.
LOG_START_TIMEOUT = 120.0

JobSource = Mapping[str, Any] | str | os.PathLike[str] | Any
Callback = Callable[[dict[str, Any]], None]


@contextlib.contextmanager
def _api() -> Iterator[None]:
    """Raise API errors as the SDK's narrower classes."""
    try:
        yield
    except ApiError as err:
        narrowed = translate(err)
        if narrowed is err:
            raise
        raise narrowed from err


def pod_selector(
    name: str,
    replica_type: str | None = None,
    index: int | None = None,
    kind: JobKindInfo = TFJOB,
) -> str:
    """The label selector of a job's pods (optionally of one replica type and index)."""
    parts = [f"{kind.group_name_label}={kind.group}", f"{kind.job_name_label}={name}"]
    if replica_type:
        parts.append(f"{kind.replica_type_label}={replica_type.lower()}")
    if index is not None:
        parts.append(f"{kind.replica_index_label}={index}")
    return ",".join(parts)


def replica_order(pod: Mapping[str, Any], kind: JobKindInfo = TFJOB) -> tuple[int, str, int, str]:
    """Sort key: replica types in the operator's order, then index, then name."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    rtype = labels.get(kind.replica_type_label, "")
    order = [t.lower() for t in kind.replica_types]
    rank = order.index(rtype) if rtype in order else len(order)
    try:
        index = int(labels.get(kind.replica_index_label, ""))
    except ValueError:
        index = -1
    return rank, rtype, index, pod["metadata"]["name"]


def load_job(source: JobSource, kind: JobKindInfo = TFJOB) -> dict[str, Any]:
    """A job dict of ``kind`` from a dict, an object with ``to_dict()`` (``apis`` types) or a
    YAML path."""
    if isinstance(source, Mapping):
        job = dict(source)
    elif hasattr(source, "to_dict"):
        job = source.to_dict()
    elif isinstance(source, str | os.PathLike):
        docs = [d for d in safeyaml.load_all(Path(source).read_text()) if d]  # aliases bounded
        if len(docs) != 1:
            raise ValueError(f"{source}: expected one TFJob document, found {len(docs)}")
        job = docs[0]
    else:
        raise TypeError(f"cannot make a TFJob from {type(source).__name__}")
    if not isinstance(job, dict):
        raise ValueError("a TFJob must be a mapping")
    job.setdefault("apiVersion", kind.api_version)
    job.setdefault("kind", kind.kind)
    if job["kind"] != kind.kind:
        raise ValueError(f"expected kind {kind.kind}, got {job['kind']!r}")
    served = [f"{kind.group}/{v}" for v in kind.versions]
    if job["apiVersion"] not in served:
        raise ValueError(f"expected apiVersion {' or '.join(served)}, got {job['apiVersion']!r}")
    return job


class JobClient:
    """Create, inspect, wait for and delete jobs of one ``kind`` (TFJobs unless told otherwise:
    :data:`~tf_operator.sdk.kinds.PYTORCHJOB` for PyTorchJobs); read their pods' logs.

    ``namespace`` is the default for every call (else the kubeconfig context's namespace, the
    pod's namespace in a cluster, or ``default``). Pass ``kube`` to reuse a
    :class:`~tf_operator.k8s.client.KubeClient`. ``TFJobClient`` is this class (its default
    kind), ``PyTorchJobClient`` this class for PyTorchJobs.
    """

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        master: str | None = None,
        kube: KubeClient | None = None,
        kind: JobKindInfo = TFJOB,
    ) -> None:
        self.kind = kind
        if kube is None:
            conn = connect(kubeconfig, context=context, master=master)
            kube, default_namespace = conn.kube, conn.namespace
        else:
            default_namespace = DEFAULT_NAMESPACE
        self.kube = kube
        self.namespace = namespace or default_namespace
        self._jobs = kube.resource(kind.resource)
        # a job is created at the version it is written for (the same object at every version)
        self._jobs_at = {
            f"{kind.group}/{v}": kube.resource(kind.at_version(v)) for v in kind.versions
        }
        self._pods = kube.resource(PODS)
        self._events = kube.resource(EVENTS)

    def close(self) -> None:
        self.kube.close()

    def __enter__(self) -> JobClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ns(self, namespace: str | None) -> str:
        return namespace or self.namespace

    # ---- CRUD -------------------------------------------------------------------------------
    def create(self, tfjob: JobSource, namespace: str | None = None) -> dict[str, Any]:
        """Submit a TFJob (dict, ``apis`` object or YAML path); returns it as stored."""
        job = load_job(tfjob, self.kind)
        meta = job.setdefault("metadata", {})
        namespace = namespace or meta.get("namespace") or self.namespace
        meta["namespace"] = namespace
        with _api():
            return self._jobs_at[job["apiVersion"]].create(job, namespace=namespace)

    def get(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        with _api():
            return self._jobs.get(name, namespace=self._ns(namespace))

    def list(
        self,
        namespace: str | None = None,
        label_selector: str | None = None,
        all_namespaces: bool = False,
    ) -> builtins.list[dict[str, Any]]:
        """TFJobs of one namespace (or all), oldest first, read in pages."""
        ns = None if all_namespaces else self._ns(namespace)
        items: builtins.list[dict[str, Any]] = []
        token = None
        with _api():
            while True:
                page = self._jobs.list(
                    ns, label_selector, limit=LIST_PAGE_SIZE, continue_token=token
                )
                items += page.get("items") or []
                token = (page.get("metadata") or {}).get("continue")
                if not token:
                    break
        return sorted(items, key=_created_then_name)

    def patch(
        self,
        name: str,
        patch: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
    ) -> dict[str, Any]:
        """Patch a TFJob (``merge``, ``json`` or ``strategic``); returns the result."""
        with _api():
            return self._jobs.patch(
                name, patch, namespace=self._ns(namespace), patch_type=patch_type
            )

    def suspend(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Set ``spec.runPolicy.suspend``: the operator deletes the job's pods and services and
        marks it ``Suspended``; :meth:`resume` runs it again (a fresh ``startTime``)."""
        return self.patch(name, runpolicy.suspend_patch(True), namespace)

    def resume(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Clear ``spec.runPolicy.suspend``: the operator creates the job's pods again."""
        return self.patch(name, runpolicy.suspend_patch(False), namespace)

    def delete(
        self, name: str, namespace: str | None = None, propagation: str | None = None
    ) -> dict[str, Any]:
        """Delete a TFJob. ``propagation``: None (the server's default, Background: the job goes
        at once, its pods and services after it), ``Foreground`` (the job stays, with a
        deletionTimestamp, until they are gone) or ``Orphan`` (they stay)."""
        with _api():
            return self._jobs.delete(name, self._ns(namespace), propagation_policy=propagation)

    # ---- state ------------------------------------------------------------------------------
    def get_conditions(
        self, name: str, namespace: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        return cond.get_conditions(self.get(name, namespace))

    def get_job_state(self, name: str, namespace: str | None = None) -> str:
        return cond.job_state(self.get(name, namespace))

    def is_running(self, name: str, namespace: str | None = None) -> bool:
        return cond.is_running(self.get(name, namespace))

    def is_restarting(self, name: str, namespace: str | None = None) -> bool:
        return cond.is_restarting(self.get(name, namespace))

    def is_succeeded(self, name: str, namespace: str | None = None) -> bool:
        return cond.is_succeeded(self.get(name, namespace))

    def is_failed(self, name: str, namespace: str | None = None) -> bool:
        return cond.is_failed(self.get(name, namespace))

    # ---- watching ---------------------------------------------------------------------------
    def watch(
        self,
        namespace: str | None = None,
        name: str | None = None,
        label_selector: str | None = None,
        timeout: float | None = None,
        all_namespaces: bool = False,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """The current TFJobs as ``("ADDED", job)``, then every change as it happens.

        Yields ``(event_type, job)`` with type ADDED, MODIFIED or DELETED until ``timeout``
        seconds have passed (forever when None). The watch is resumed where it ended; after
        ``410 Gone`` the current state is listed again and replayed as MODIFIED."""
        ns = None if all_namespaces else self._ns(namespace)
        fields = f"metadata.name={name}" if name else None
        deadline = None if timeout is None else time.monotonic() + timeout
        version, current = self._list_version(ns, label_selector, fields)
        for job in current:
            yield "ADDED", job
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            chunk = WATCH_CHUNK_SECONDS if left is None else min(WATCH_CHUNK_SECONDS, left)
            try:
                events = _watch(self._jobs, ns, version, chunk, label_selector, fields)
                for event_type, job in events:
                    version = job["metadata"].get("resourceVersion") or version
                    yield event_type, job
            except ApiError as err:
                if not is_resource_expired(err):
                    raise translate(err) from err
                version, current = self._list_version(ns, label_selector, fields)
                for job in current:
                    yield "MODIFIED", job

    def _list_version(
        self, namespace: str | None, labels: str | None, fields: str | None
    ) -> tuple[str, builtins.list[dict[str, Any]]]:
        with _api():
            listed = self._jobs.list(namespace, labels, fields)
        items = sorted(listed.get("items") or [], key=_created_then_name)
        return (listed.get("metadata") or {}).get("resourceVersion") or "", items

    def wait_for_job(
        self,
        name: str,
        namespace: str | None = None,
        conditions: Iterable[str] = cond.FINAL_CONDITIONS,
        timeout: float = 600,
        callback: Callback | None = None,
    ) -> dict[str, Any]:
        """Block until the job has one of ``conditions`` in force; return it then.

        ``callback(job)`` sees the job as first read and after every change. Raises
        :class:`WaitTimeout` after ``timeout`` seconds and :class:`NotFound` if the job does
        not exist or is deleted meanwhile."""
        wanted = tuple(conditions)
        ns = self._ns(namespace)
        last: dict[str, Any] | None = self.get(name, ns)  # NotFound at once, not after the timeout
        for event_type, job in self.watch(ns, name=name, timeout=timeout):
            if event_type == "DELETED":
                raise NotFound(
                    404, "NotFound", f'{self.kind.plural}.{self.kind.group} "{name}" was deleted'
                )
            last = job
            if callback is not None:
                callback(job)
            if cond.has_any_condition(job, wanted):
                return job
        raise WaitTimeout(
            f"TFJob {ns}/{name} has none of {', '.join(wanted)} after {timeout:g}s "
            f"(state {cond.job_state(last or {})})",
            last,
        )

    # ---- pods, events, logs -----------------------------------------------------------------
    def get_pods(
        self,
        name: str,
        namespace: str | None = None,
        replica_type: str | None = None,
        index: int | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """The job's pods, by replica type (operator order) then index."""
        with _api():
            listed = self._pods.list(
                self._ns(namespace), pod_selector(name, replica_type, index, self.kind)
            )
        return sorted(listed.get("items") or [], key=lambda pod: replica_order(pod, self.kind))

    def get_pod_names(
        self,
        name: str,
        namespace: str | None = None,
        replica_type: str | None = None,
        index: int | None = None,
    ) -> builtins.list[str]:
        return [p["metadata"]["name"] for p in self.get_pods(name, namespace, replica_type, index)]

    def get_events(self, name: str, namespace: str | None = None) -> builtins.list[dict[str, Any]]:
        """Events about the TFJob itself, oldest first."""
        fields = f"involvedObject.kind={self.kind.kind},involvedObject.name={name}"
        with _api():
            listed = self._events.list(self._ns(namespace), field_selector=fields)
        return sorted(listed.get("items") or [], key=_event_time)

    def stream_pod_log(
        self,
        pod: str,
        namespace: str | None = None,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
    ) -> LogStream:
        """One container's log as a :class:`LogStream` of lines (close it when done)."""
        query: dict[str, Any] = {"container": container or self.kind.container}
        if follow:
            query["follow"] = "true"
        if tail_lines is not None:
            query["tailLines"] = int(tail_lines)
        path = PODS.path(self._ns(namespace), pod, "log")
        timeout = Timeout(connect=30.0, read=None if follow else 60.0)
        with _api():
            response = self.kube.transport.open("GET", path, query=query, timeout=timeout)
        return LogStream(pod, response)

    def get_logs(
        self,
        name: str,
        namespace: str | None = None,
        replica_type: str | None = None,
        index: int | None = None,
        follow: bool = False,
        container: str | None = None,
        tail_lines: int | None = None,
        start_timeout: float = LOG_START_TIMEOUT,
    ) -> Iterator[LogLine]:
        """``(pod, line)`` from the job's pods (one replica type / index if given).

        Without ``follow`` it gives what is logged so far, pod by pod. With ``follow`` it first
        waits (up to ``start_timeout``) for every selected replica's pod to exist and start,
        then streams all of them at once, and each replica's next run when its container
        restarts or its pod is recreated (a ``--- <pod>: ... ---`` line says so), until the
        job has finished and every stream has ended (:mod:`.follow`)."""
        ns = self._ns(namespace)
        if not follow:
            for pod in self.get_pod_names(name, ns, replica_type, index):
                stream = self.stream_pod_log(pod, ns, container, tail_lines=tail_lines)
                for line in stream:
                    yield LogLine(pod, line)
            return
        pods = self._wait_pods_started(name, ns, replica_type, index, start_timeout)

        def open_stream(pod: str, container_name: str, tail: int | None) -> LogStream:
            return self.stream_pod_log(pod, ns, container_name, True, tail)

        follower = JobLogFollower(
            open_stream,
            self._pods,
            self._jobs,
            ns,
            name,
            pods,
            pod_selector(name, replica_type, index, self.kind),
            container or self.kind.container,
            tail_lines,
        )
        yield from follower.lines()

    def expected_pod_names(
        self, job: Mapping[str, Any], replica_type: str | None = None, index: int | None = None
    ) -> builtins.list[str]:
        """The pod names the operator gives the job's replicas (``<job>-<type>-<index>``)."""
        name = job["metadata"]["name"]
        names = []
        for rtype, spec in replica_specs(job).items():
            if replica_type and rtype.lower() != replica_type.lower():
                continue
            replicas = (spec or {}).get("replicas")
            count = 1 if replicas is None else int(replicas)
            for i in range(count):
                if index is None or i == index:
                    names.append(f"{name}-{rtype.lower()}-{i}")
        return names

    def _wait_pods_started(
        self,
        name: str,
        namespace: str,
        replica_type: str | None,
        index: int | None,
        timeout: float,
    ) -> builtins.list[str]:
        job = self.get(name, namespace)
        names = self.expected_pod_names(job, replica_type, index)
        expected = set(names)
        if not expected:
            raise ValueError(
                f"{self.kind.kind} {namespace}/{name} has no replica matching the selection"
            )
        selector = pod_selector(name, replica_type, index, self.kind)
        deadline = time.monotonic() + timeout
        started: set[str] = set()
        with _api():
            listed = self._pods.list(namespace, selector)
        version = (listed.get("metadata") or {}).get("resourceVersion")
        for pod in listed.get("items") or []:
            if _started(pod):
                started.add(pod["metadata"]["name"])
        while not expected <= started:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = ", ".join(sorted(expected - started))
                raise WaitTimeout(f"pods not started after {timeout:g}s: {missing}", job)
            for event_type, pod in _watch(self._pods, namespace, version, left, selector):
                version = pod["metadata"].get("resourceVersion") or version
                if event_type != "DELETED" and _started(pod):
                    started.add(pod["metadata"]["name"])
                if expected <= started:
                    break
        return names


def _watch(
    resource: ResourceClient,
    namespace: str | None,
    version: str | None,
    seconds: float,
    labels: str | None = None,
    fields: str | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """One watch from ``version`` that the server ends after ``seconds``: ADDED, MODIFIED and
    DELETED events (bookmarks dropped); an ERROR event is raised as its API error."""
    with (
        _api(),
        resource.watch(
            namespace,
            resource_version=version,
            timeout_seconds=max(1, math.ceil(seconds)),
            label_selector=labels,
            field_selector=fields,
        ) as stream,
    ):
        for event_type, obj in stream:
            if event_type == "ERROR":
                raise from_status(obj)
            if event_type in ("ADDED", "MODIFIED", "DELETED"):
                yield event_type, obj


def _started(pod: Mapping[str, Any]) -> bool:
    """The pod's containers have run (a log exists to read)."""
    return ((pod.get("status") or {}).get("phase") or "Pending") != "Pending"


def _created_then_name(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("creationTimestamp") or "", meta.get("namespace") or "", meta.get("name") or ""


def _event_time(event: Mapping[str, Any]) -> str:
    return (
        event.get("lastTimestamp")
        or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


TFJobClient = JobClient


class PyTorchJobClient(JobClient):
    """A :class:`JobClient` of PyTorchJobs (``kubeflow.org/v1``)."""

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        master: str | None = None,
        kube: KubeClient | None = None,
    ) -> None:
        super().__init__(
            kubeconfig, namespace, context=context, master=master, kube=kube, kind=PYTORCHJOB
        )


class XGBoostJobClient(JobClient):
    """A :class:`JobClient` of XGBoostJobs (``kubeflow.org/v1``)."""

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        master: str | None = None,
        kube: KubeClient | None = None,
    ) -> None:
        super().__init__(
            kubeconfig, namespace, context=context, master=master, kube=kube, kind=XGBOOSTJOB
        )


class JAXJobClient(JobClient):
    """A :class:`JobClient` of JAXJobs (``kubeflow.org/v1``)."""

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        master: str | None = None,
        kube: KubeClient | None = None,
    ) -> None:
        super().__init__(
            kubeconfig, namespace, context=context, master=master, kube=kube, kind=JAXJOB
        )


class PaddleJobClient(JobClient):
    """A :class:`JobClient` of PaddleJobs (``kubeflow.org/v1``)."""

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        master: str | None = None,
        kube: KubeClient | None = None,
    ) -> None:
        super().__init__(
            kubeconfig, namespace, context=context, master=master, kube=kube, kind=PADDLEJOB
        )
