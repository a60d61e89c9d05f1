"""Logging for the operator: JSON or text lines, with v0.5.3's per-job context fields.

v0.5.3 used logrus with a JSON formatter (keys ``level``, ``msg``, ``time`` plus fields, sorted,
and a ``filename`` hook naming ``<dir>/<file>:<line>`` of the call site). We keep the same keys
through python-json-logger so log pipelines built for the Go operator keep working, and express
the context helpers (``LoggerForJob`` and friends) as :class:`logging.LoggerAdapter` factories.
Beside v0.5.3's fields (``job``, ``uid``, ``replica-type``, ``pod``) a line about a job names
its ``kind`` (``TFJob``, ``PyTorchJob``), as one process runs several (D83); a record logged
with ``extra`` and without these helpers (an event's line) writes its extras as fields too.

The JSON formatter is python-json-logger's orjson formatter told exactly which fields to write:
the context fields travel in ``record.fields``, so no record is scanned for extras (unless it
came without them), and the timestamp is formatted once per second, not once per line.

Lines are written in batches (:class:`BatchingStreamHandler`, divergence D48): a line at INFO or
below waits at most ``FLUSH_DELAY`` seconds, with those logged meanwhile, for one write; a
WARNING or worse is written at once, with everything before it; ``logging.shutdown`` (run on
every exit of the operator) writes what is left. logrus wrote each line with its own system
call, which here also meant handing the GIL over and contending for the handler's lock on every
line. Records carry no thread or process fields (no formatter of ours writes them).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, TextIO, cast

import orjson
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

from tf_operator.k8s.objects import get_controller_of

ROOT_LOGGER_NAME = "tf_operator"
# The longest an INFO line waits in memory before it is written.
FLUSH_DELAY = 0.05
_log = logging.getLogger(ROOT_LOGGER_NAME)

_LEVEL_NAMES = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "fatal",
}


def _caller_filename(record: logging.LogRecord) -> str:
    parent = os.path.basename(os.path.dirname(record.pathname))
    return f"{parent}/{record.filename}:{record.lineno}"


_STANDARD_ATTRS = frozenset(RESERVED_ATTRS) | {"message", "asctime", "fields"}


def _fields_of(record: logging.LogRecord) -> Mapping[str, Any]:
    """The record's context fields: our adapters' ``record.fields``; for a record logged
    without them, any extras it was given (no record is scanned that came with fields)."""
    fields = getattr(record, "fields", None)
    if fields is None:
        return {key: record.__dict__[key] for key in record.__dict__.keys() - _STANDARD_ATTRS}
    return cast(Mapping[str, Any], fields)  # set by _FieldsAdapter


class _JobJsonFormatter(OrjsonFormatter):
    """One JSON object per line with logrus's key names, sorted as logrus sorts them."""

    def __init__(self) -> None:
        super().__init__()
        self._stamp_second = -1
        self._stamp = ""

    def _time(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if second != self._stamp_second:  # a benign race: both threads write the same text
            self._stamp = self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z")
            self._stamp_second = second
        return self._stamp

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        log_data.update(_fields_of(record))
        log_data["level"] = _LEVEL_NAMES.get(record.levelno, record.levelname.lower())
        log_data["msg"] = record.message
        log_data["time"] = self._time(record)
        log_data["filename"] = _caller_filename(record)
        log_data.update(message_dict)

    def jsonify_log_record(self, log_data: dict[str, Any]) -> str:
        option = orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS
        return orjson.dumps(log_data, default=self.json_default, option=option).decode()


class _TextFormatter(logging.Formatter):
    """logrus's text layout: ``time="…" level=info msg="…" key=value``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z")
        level = _LEVEL_NAMES.get(record.levelno, record.levelname.lower())
        parts = [f'time="{stamp}"', f"level={level}", f'msg="{record.getMessage()}"']
        for key, value in sorted(_fields_of(record).items()):
            parts.append(f"{key}={value}")
        parts.append(f"filename={_caller_filename(record)}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class BatchingStreamHandler(logging.StreamHandler[TextIO]):
    """A stream handler that writes lines in batches (see the module docstring).

    Lines are formatted by the logging thread without the handler's lock (the formatters are
    thread-safe) and queued; a daemon thread, started with the first line, writes the queue
    ``delay`` seconds after a line arrives in it. ``flush`` writes the queue at once.
    """

    def __init__(self, stream: Any = None, delay: float = FLUSH_DELAY) -> None:
        super().__init__(stream)
        self._delay = delay
        self._pending: list[str] = []
        self._pending_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None

    def handle(self, record: logging.LogRecord) -> Any:
        passed = self.filter(record)
        if passed:
            self.emit(passed if isinstance(passed, logging.LogRecord) else record)
        return passed

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + self.terminator
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)
            return
        with self._pending_lock:
            self._pending.append(line)
            first = len(self._pending) == 1
        if record.levelno >= logging.WARNING:
            self.flush()
        elif first:
            if self._writer is None:
                self._start_writer()
            self._wake.set()

    def flush(self) -> None:
        with self._write_lock:
            with self._pending_lock:
                lines, self._pending = self._pending, []
            try:
                if lines:
                    self.stream.write("".join(lines))
                if self.stream and hasattr(self.stream, "flush"):
                    self.stream.flush()
            except Exception:  # noqa: BLE001 - e.g. a closed stream at exit
                return

    def setStream(self, stream: Any) -> Any:  # noqa: N802 - logging's name
        self.flush()
        return super().setStream(stream)

    def _start_writer(self) -> None:
        with self._pending_lock:
            if self._writer is not None:
                return
            self._writer = threading.Thread(target=self._write_loop, name="log-writer", daemon=True)
        self._writer.start()

    def _write_loop(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(self._delay)  # let the lines logged meanwhile join this write
            self._wake.clear()  # lines queued from here on are taken by the flush below
            self.flush()


def configure_logging(json_format: bool = True, level: int | str = logging.INFO) -> None:
    """Route the project's loggers to stderr in JSON (default, as v0.5.3) or text form."""
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = BatchingStreamHandler(sys.stderr)
    if json_format:
        handler.setFormatter(_JobJsonFormatter())
    else:
        handler.setFormatter(_TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)


def flush_logs() -> None:
    """Write every line the root logger's handlers still hold (before an ``os._exit``)."""
    for handler in logging.getLogger().handlers:
        handler.flush()


class _FieldsAdapter(logging.LoggerAdapter[logging.Logger]):
    """Attaches context fields both as top-level JSON keys and as ``record.fields``."""

    def __init__(self, logger: logging.Logger, fields: dict[str, Any]) -> None:
        super().__init__(logger, fields)
        self._extra = {**fields, "fields": fields}  # read, never changed, by makeRecord

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        if not kwargs.get("extra"):
            kwargs["extra"] = self._extra
            return msg, kwargs
        fields = dict(self.extra or {})
        extra = dict(kwargs.get("extra") or {})
        fields.update(extra.pop("fields", {}))
        extra.update(fields)
        extra["fields"] = fields
        kwargs["extra"] = extra
        return msg, kwargs


def debug_enabled() -> bool:
    """Whether the project's DEBUG lines are written (check it before building a logger or
    a message only a DEBUG line needs)."""
    return _log.isEnabledFor(logging.DEBUG)


def _with_fields(**fields: Any) -> logging.LoggerAdapter[logging.Logger]:
    return _FieldsAdapter(_log, fields)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _dotted(namespace: str | None, name: str | None) -> str:
    return f"{namespace or ''}.{name or ''}"


def logger_for_job(job: Mapping[str, Any], kind: str) -> logging.LoggerAdapter[logging.Logger]:
    """Fields ``job`` (``<ns>.<name>``), ``uid`` and ``kind`` (``TFJob``, ``PyTorchJob``)."""
    meta = _meta(job)
    return _with_fields(
        job=_dotted(meta.get("namespace"), meta.get("name")), uid=meta.get("uid", ""), kind=kind
    )


def logger_for_replica(
    job: Mapping[str, Any], rtype: str, kind: str
) -> logging.LoggerAdapter[logging.Logger]:
    """Job fields plus ``replica-type`` (lower case, as the controller passes it)."""
    meta = _meta(job)
    return _with_fields(
        **{
            "job": _dotted(meta.get("namespace"), meta.get("name")),
            "uid": meta.get("uid", ""),
            "replica-type": rtype,
            "kind": kind,
        }
    )


def logger_for_pod(pod: Mapping[str, Any], kind: str) -> logging.LoggerAdapter[logging.Logger]:
    """``pod`` and the pod's ``uid``; ``job`` from the controller ref when it is of ``kind``,
    and then ``kind``."""
    meta = _meta(pod)
    ref = get_controller_of(pod)
    pod_name = _dotted(meta.get("namespace"), meta.get("name"))
    if ref and ref.get("kind") == kind:
        job = _dotted(meta.get("namespace"), ref.get("name"))
        return _with_fields(job=job, pod=pod_name, uid=meta.get("uid", ""), kind=kind)
    return _with_fields(job="", pod=pod_name, uid=meta.get("uid", ""))


def logger_for_key(key: str, kind: str) -> logging.LoggerAdapter[logging.Logger]:
    """``job`` is the workqueue key of a job of ``kind`` with ``/`` replaced by ``.``."""
    return _with_fields(job=key.replace("/", "."), kind=kind)


def logger_for_unstructured(
    obj: Mapping[str, Any], kind: str
) -> logging.LoggerAdapter[logging.Logger]:
    """``job`` and ``kind`` when the object is of ``kind``, and its ``uid``."""
    meta = _meta(obj)
    if obj.get("kind") == kind:
        job = _dotted(meta.get("namespace"), meta.get("name"))
        return _with_fields(job=job, uid=meta.get("uid", ""), kind=kind)
    return _with_fields(job="", uid=meta.get("uid", ""))


_KIND_LOGGERS: dict[str, logging.LoggerAdapter[logging.Logger]] = {}


def logger_for_kind(kind: str) -> logging.LoggerAdapter[logging.Logger]:
    """Field ``kind`` only: a controller's lines about no one job (made once per kind)."""
    adapter = _KIND_LOGGERS.get(kind)
    if adapter is None:
        adapter = _KIND_LOGGERS.setdefault(kind, _with_fields(kind=kind))
    return adapter
