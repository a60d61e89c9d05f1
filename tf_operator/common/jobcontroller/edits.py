"""Edits of a job's spec: the last valid spec is kept, and an invalid edit is ignored (D39).

v0.5.3 failed a job whose spec had been edited into an invalid one by replacing its whole
status, a Succeeded job's included, and a later fix ran the job again from scratch with a new
``startTime``. Here the spec a running job is reconciled on goes into its status as compact
JSON (``lastValidSpec``, written with the status a pass writes anyway). An invalid edit of a
running job is then ignored: the job goes on from that spec, with a ``SpecIgnored`` condition
and one Warning event per distinct error, until the spec is valid again.

Why the status: it survives an operator restart and a leader change, needs no other object or
permission, only the operator writes it, and it is written atomically with what the pass
decided. Pods and services could not say everything (backoff, deadline, TTL and policies are
in no pod). The copy goes once the job finishes: nothing runs on it any more, and finished jobs,
the many, stay small.

A finished job, or a started one without a recorded spec (an older operator's), keeps its
status whatever its spec becomes (Succeeded and Failed are final): the edit is announced once
per process with a Warning event. A job whose spec was never valid never ran: it is Failed as
invalid (:class:`~.job.InvalidJobReporter`, D8), and that Failed is final too.
``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Generic

from tf_operator.apis.common.v1.run_policy import Defaults
from tf_operator.apis.common.v1.validation import ValidationError, check_nesting
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.job import InvalidJobReporter
from tf_operator.common.jobcontroller.kind import InvalidJobError, J, JobKind
from tf_operator.common.jobcontroller.memory import JobMemory
from tf_operator.common.jobcontroller.status import (
    clear_spec_ignored,
    is_finished,
    raw_finished_conditions,
    set_spec_ignored,
)
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.controller.controller_utils import object_key
from tf_operator.k8s.objects import Obj, meta
from tf_operator.logger import logger_for_unstructured


def spec_json(raw: Obj) -> str:
    """A job's spec as compact JSON with sorted keys (equal specs give equal strings). The
    standard library's, not orjson's: the text is recorded in the status (``lastValidSpec``)
    and orjson writes non-ASCII text and some floats differently (docs/perf-diagnosis.md,
    stage 4)."""
    return json.dumps(raw.get("spec"), sort_keys=True, separators=(",", ":"))


# The job to reconcile, the error of an invalid edit it ignores, and its spec as compact JSON
# (None while it runs on its last valid spec).
Decoded = tuple[J, InvalidJobError | None, str | None]


class SpecEdits(Generic[J]):
    """Invalid edits of a job's spec; see the module docstring."""

    def __init__(
        self,
        kind: JobKind[J],
        recorder: EventRecorder,
        memory: JobMemory,
        invalid: InvalidJobReporter[J],
        defaults: Defaults,  # the operator's; a job's annotation may pick others
    ) -> None:
        self._kind = kind
        self._defaults = defaults
        self._recorder = recorder
        self._memory = memory
        self._invalid = invalid
        self.reason = invalid.reason

    def decode(self, raw: Obj, now: datetime) -> Decoded[J] | None:
        """The job to reconcile, with the error of an invalid edit it ignores and the compact
        JSON of the spec it runs on (None when it runs on its last valid spec); None when the
        job cannot run: it keeps its final status, or it is reported as invalid. A spec equal
        to one found valid before is not checked again (status writes and pod events leave
        it as it was; comparing it costs a microsecond, checking it tens)."""
        key, uid, spec = object_key(raw), str(meta(raw).get("uid", "")), raw.get("spec")
        known = self._memory.validated_spec(key, uid, spec)
        try:
            if known is not None:
                return self._kind.decode_validated(raw, self._defaults), None, known
            try:  # before anything recursive reads it (D70)
                check_nesting(f"{self._kind.resource.kind}Spec is not valid", spec)
            except ValidationError as err:
                raise InvalidJobError(str(err)) from err
            job = self._kind.decode(raw, self._defaults)
            text = spec_json(raw)
            self._memory.spec_validated(key, uid, spec, text)
            return job, None, text
        except InvalidJobError as err:
            restored = self.restore(raw)
            if restored is not None:
                return restored, err, None
            if not self.ignore_if_final(raw, err):
                self._invalid.report(raw, err, now)
            return None

    def restore(self, raw: Obj) -> J | None:
        """The job as it was on its last valid spec, or None without a usable one."""
        status = raw.get("status")
        text = status.get("lastValidSpec") if isinstance(status, dict) else None
        if not isinstance(text, str):
            return None
        try:
            return self._kind.decode({**raw, "spec": json.loads(text)}, self._defaults)
        except (ValueError, InvalidJobError):
            return None

    def ignore_if_final(self, raw: Obj, err: InvalidJobError) -> bool:
        """For a finished job, or a started one that cannot be restored: keep its status and
        warn once per distinct error. True when the job was such a job."""
        kind = self._kind.resource.kind
        finished = raw_finished_conditions(raw)
        if any(
            c.get("reason") == self.reason and str(err) in c.get("message", "") for c in finished
        ):
            return True  # Failed for this very error: reported already
        status = raw.get("status")
        started = isinstance(status, dict) and bool(status.get("startTime"))
        if not finished and not started:
            return False
        name = meta(raw).get("name", "")
        state = "has finished" if finished else "started before its spec was recorded"
        message = f"{kind} {name} {state}; the edit of its spec is ignored: {err}"
        uid = str(meta(raw).get("uid", ""))
        if self._memory.first_ignored_edit(object_key(raw), uid, message):
            logger_for_unstructured(raw, kind).warning(message)
            self._recorder.event(raw, EVENT_TYPE_WARNING, self.reason, message)
        return True

    def note(self, ctx: SyncContext[J], ignored: InvalidJobError | None) -> None:
        """Set SpecIgnored while an invalid edit is ignored, drop it once the spec is valid;
        a finished job's conditions stay as they are."""
        status = ctx.job.status
        if is_finished(status):
            return
        if ignored is None:
            clear_spec_ignored(status)
            return
        kind = self._kind.resource.kind
        message = (
            f"{kind} {ctx.job.name} runs on its last valid spec; the edit of its spec is "
            f"ignored: {ignored}"
        )
        if set_spec_ignored(status, self.reason, message, ctx.now):
            ctx.logger.warning(message)
            ctx.event(EVENT_TYPE_WARNING, self.reason, message)

    @staticmethod
    def record(ctx: SyncContext[J]) -> None:
        """Keep the spec this pass ran on while the job runs; drop it once it finished."""
        status = ctx.job.status
        if is_finished(status):
            status.last_valid_spec = None
        elif ctx.spec_json is not None:
            status.last_valid_spec = ctx.spec_json
