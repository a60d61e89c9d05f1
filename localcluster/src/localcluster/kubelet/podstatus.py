"""What a kubelet knows about a pod, and the PodStatus it reports from that.

``PodRecord``/``ContainerRecord`` are the kubelet's in-memory truth; the
functions here are pure: ``apply_exit`` decides, like the real kubelet, whether
a container restarts in place (restartPolicy Always, or OnFailure with a
non-zero exit) and ``build_status`` derives phase, conditions and
containerStatuses the way the kubelet's ``getPhase``/status manager do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from localcluster.apimachinery.objects import format_time
from localcluster.apimachinery.qos import qos_class

WAITING = "waiting"
RUNNING = "running"
TERMINATED = "terminated"

# annotations/defaults shared by runtimes
POD_COMPLETED = "PodCompleted"


@dataclass
class ContainerRecord:
    name: str
    image: str = ""
    state: str = WAITING
    reason: str = "ContainerCreating"
    message: str = ""
    exit_code: int | None = None
    signal: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    restart_count: int = 0
    last_state: dict[str, Any] | None = None
    container_id: str = ""
    restart_pending: bool = False
    ready: bool | None = None  # the readiness probe's verdict; None: no probe (ready when running)
    started: bool | None = None  # the startup probe's verdict; None: no probe

    @property
    def is_ready(self) -> bool:
        return self.state == RUNNING and self.ready is not False and self.started is not False

    def terminated_state(self) -> dict[str, Any]:
        state = {
            "exitCode": self.exit_code,
            "reason": self.reason,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "containerID": self.container_id,
        }
        if self.signal:
            state["signal"] = self.signal
        if self.message:
            state["message"] = self.message
        return state


@dataclass
class PodRecord:
    namespace: str
    name: str
    uid: str
    pod: dict[str, Any]
    pod_ip: str
    host_ip: str
    start_time: str
    containers: dict[str, ContainerRecord] = field(default_factory=dict)
    conditions: dict[str, dict[str, Any]] = field(default_factory=dict)
    terminating: bool = False
    grace_seconds: float = 0.0
    finished: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def restart_policy(self) -> str:
        return (self.pod.get("spec") or {}).get("restartPolicy") or "Always"

    def running(self) -> list[ContainerRecord]:
        return [c for c in self.containers.values() if c.state == RUNNING]


def should_restart(restart_policy: str, exit_code: int) -> bool:
    if restart_policy == "Always":
        return True
    return restart_policy == "OnFailure" and exit_code != 0


def mark_running(container: ContainerRecord, now: float, container_id: str) -> None:
    container.state = RUNNING
    container.reason = ""
    container.message = ""
    container.exit_code = None
    container.signal = None
    container.started_at = format_time(now)
    container.finished_at = None
    container.container_id = container_id
    container.restart_pending = False
    container.ready = container.started = None


def apply_exit(
    record: PodRecord,
    container: ContainerRecord,
    exit_code: int,
    now: float,
    reason: str | None = None,
    message: str = "",
) -> bool:
    """Record a container exit; return True when the kubelet should restart it."""
    container.state = TERMINATED
    container.exit_code = exit_code
    container.signal = exit_code - 128 if 128 < exit_code < 160 else None
    container.reason = reason or ("Completed" if exit_code == 0 else "Error")
    container.message = message
    container.finished_at = format_time(now)
    container.started_at = container.started_at or container.finished_at
    if record.terminating or not should_restart(record.restart_policy, exit_code):
        return False
    container.last_state = {"terminated": container.terminated_state()}
    container.state = WAITING
    container.reason = "ContainerCreating"
    container.message = ""
    container.restart_pending = True
    return True


def back_off(container: ContainerRecord, message: str) -> None:
    """Show a container waiting out its restart back-off."""
    container.reason = "CrashLoopBackOff"
    container.message = message


def pod_phase(record: PodRecord) -> str:
    """The kubelet's getPhase over the container records."""
    waiting = running = stopped = succeeded = 0
    for container in record.containers.values():
        if container.state == RUNNING:
            running += 1
        elif container.state == TERMINATED:
            stopped += 1
            succeeded += container.exit_code == 0
        elif container.last_state:
            stopped += 1  # waiting to restart after an exit
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if not stopped:
        return "Pending"
    if record.restart_policy == "Always":
        return "Running"
    if stopped == succeeded:
        return "Succeeded"
    if record.restart_policy == "Never":
        return "Failed"
    return "Running"


def _set_condition(
    record: PodRecord, kind: str, status: bool, now: float, reason: str = "", message: str = ""
) -> None:
    text = "True" if status else "False"
    previous = record.conditions.get(kind)
    changed_at = (
        previous["lastTransitionTime"]
        if previous and previous["status"] == text
        else format_time(now)
    )
    condition = {
        "type": kind,
        "status": text,
        "lastProbeTime": None,
        "lastTransitionTime": changed_at,
    }
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    record.conditions[kind] = condition


def _container_status(container: ContainerRecord) -> dict[str, Any]:
    state: dict[str, Any]
    if container.state == RUNNING:
        state = {"running": {"startedAt": container.started_at}}
    elif container.state == TERMINATED:
        state = {"terminated": container.terminated_state()}
    else:
        waiting = {"reason": container.reason}
        if container.message:
            waiting["message"] = container.message
        state = {"waiting": waiting}
    status = {
        "name": container.name,
        "image": container.image,
        "imageID": "",
        "ready": container.is_ready,
        "started": container.state == RUNNING and container.started is not False,
        "restartCount": container.restart_count,
        "state": state,
        "lastState": container.last_state or {},
    }
    if container.container_id:
        status["containerID"] = container.container_id
    return status


def _scheduled_condition(record: PodRecord, now: float) -> dict[str, Any]:
    for condition in (record.pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return cast(dict[str, Any], condition)
    return {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": record.start_time or format_time(now),
    }


def build_status(record: PodRecord, now: float) -> dict[str, Any]:
    """The full PodStatus for the record; updates ``record.conditions``/``finished``."""
    phase = pod_phase(record)
    record.finished = phase in ("Succeeded", "Failed")
    unready = [c.name for c in record.containers.values() if not c.is_ready]
    if record.finished:
        ready, reason, message = False, POD_COMPLETED, ""
    elif unready:
        ready = False
        reason = "ContainersNotReady"
        message = f"containers with unready status: [{' '.join(unready)}]"
    else:
        ready, reason, message = True, "", ""
    _set_condition(record, "Initialized", True, now)
    _set_condition(record, "ContainersReady", ready, now, reason, message)
    _set_condition(record, "Ready", ready, now, reason, message)
    conditions = [
        record.conditions["Initialized"],
        record.conditions["Ready"],
        record.conditions["ContainersReady"],
        _scheduled_condition(record, now),
    ]
    return {
        "phase": phase,
        "conditions": conditions,
        "hostIP": record.host_ip,
        "hostIPs": [{"ip": record.host_ip}],
        "podIP": record.pod_ip,
        "podIPs": [{"ip": record.pod_ip}],
        "startTime": record.start_time,
        "qosClass": qos_class(record.pod),
        "containerStatuses": [_container_status(c) for c in record.containers.values()],
    }
