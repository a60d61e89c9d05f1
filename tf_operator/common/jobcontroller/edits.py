"""Edits of a job's spec: the last valid spec is known, and an invalid edit is ignored (D39).

v0.5.3 failed a job whose spec had been edited into an invalid one by replacing its whole
status, a Succeeded job's included, and a later fix ran the job again from scratch with a new
``startTime``. Here the status of a running job records the digest of the spec it is
reconciled on (``lastValidSpecDigest``, written with the status a pass writes anyway), and
this process remembers that spec (:class:`~.memory.JobMemory`). An invalid edit of a running
job is then ignored: the job goes on from that spec, with a ``SpecIgnored`` condition and one
Warning event per distinct error, until the spec is valid again. While it is ignored, the
status also keeps the spec it runs on as compact JSON (``lastValidSpec``), so that an operator
restart or a new leader goes on from it; once the spec is valid again the copy goes. The
status never keeps a copy of a spec the job runs on as written: that doubled every running
job, its object and every cache of it, and a large spec would have outgrown what the API server
stores (D153).

Why the status: it survives an operator restart and a leader change, needs no other object or
permission, only the operator writes it, and it is written atomically with what the pass
decided. Pods and services could not say everything (backoff, deadline, TTL and policies are
in no pod). The digest goes once the job finishes.

A finished job, or a started one whose last valid spec is not known (an older operator's, or
one edited while no operator watched it), keeps its status whatever its spec becomes (Succeeded
and Failed are final): the edit is announced once per process with a Warning event. A job
whose spec was never valid never ran: it is Failed as invalid
(:class:`~.job.InvalidJobReporter`, D8), and that Failed is final too.
``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Generic

from tf_operator.apis.common.v1.run_policy import Defaults
from tf_operator.apis.common.v1.validation import ValidationError, check_nesting
from tf_operator.common.jobcontroller.context import SpecRecord, SyncContext
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


def spec_digest(text: str) -> str:
    """The digest recorded for a spec's compact JSON (``sha256:<hex>``)."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# The job to reconcile, the error of an invalid edit it ignores, and what the status records
# of the spec it runs on.
Decoded = tuple[J, InvalidJobError | None, SpecRecord]


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
        """The job to reconcile, with the error of an invalid edit it ignores and what the
        status records of the spec it runs on; None when the job cannot run: it keeps its
        final status, or it is reported as invalid. A spec equal to one found valid before is
        not checked again (status writes and pod events leave it as it was; comparing it
        costs a microsecond, checking it tens)."""
        key, uid, spec = object_key(raw), str(meta(raw).get("uid", "")), raw.get("spec")
        known = self._memory.validated_spec(key, uid, spec)
        try:
            if known is not None:
                return self._kind.decode_validated(raw, self._defaults), None, SpecRecord(known)
            try:  # before anything recursive reads it (D70)
                check_nesting(f"{self._kind.resource.kind}Spec is not valid", spec)
            except ValidationError as err:
                raise InvalidJobError(str(err)) from err
            job = self._kind.decode(raw, self._defaults)
            digest = spec_digest(spec_json(raw))
            self._memory.spec_validated(key, uid, spec, digest)
            return job, None, SpecRecord(digest)
        except InvalidJobError as err:
            restored = self.restore(raw)
            if restored is not None:
                return restored[0], err, restored[1]
            if not self.ignore_if_final(raw, err):
                self._invalid.report(raw, err, now)
            return None

    def restore(self, raw: Obj) -> tuple[J, SpecRecord] | None:
        """The job as it was on its last valid spec, and the record of that spec (its copy
        included), or None without a usable one: the copy the status keeps while an edit is
        ignored, else the spec this process last found valid when the status's digest names
        it (after a leader change, another process may have run a newer one)."""
        status = raw.get("status")
        status = status if isinstance(status, dict) else {}
        text = status.get("lastValidSpec")
        try:
            if isinstance(text, str):
                spec = json.loads(text)
            else:
                known = self._memory.last_valid_spec(object_key(raw), str(meta(raw).get("uid")))
                if known is None or known[1] != status.get("lastValidSpecDigest"):
                    return None
                spec = known[0]
                text = spec_json({"spec": spec})
            job = self._kind.decode({**raw, "spec": spec}, self._defaults)
        except (ValueError, InvalidJobError):
            return None
        return job, SpecRecord(spec_digest(text), text)

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
        state = "has finished" if finished else "runs on a spec this operator does not know"
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
        """Record the spec this pass ran on while the job runs (its digest, and its copy while
        an edit is ignored); drop both once it finished."""
        status = ctx.job.status
        if is_finished(status):
            status.last_valid_spec = status.last_valid_spec_digest = None
        elif ctx.spec_record is not None:
            status.last_valid_spec_digest = ctx.spec_record.digest
            status.last_valid_spec = ctx.spec_record.copy
