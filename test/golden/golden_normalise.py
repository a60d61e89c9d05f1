"""The one normaliser of the golden test: what it removes and why.

Recording (``record.py``, the v0.5.3 reference binary) and comparing (``test_golden.py``, our
operator) both pass every object through :func:`snapshot`, so a fixture and a live run differ
only where the operators wrote different things. It removes exactly what the API server or the
run decides, never what an operator wrote:

- ``metadata.uid``, ``resourceVersion``, ``creationTimestamp``, ``generation``,
  ``managedFields``, ``selfLink``: assigned by the API server, different on every run;
- ``metadata.ownerReferences[].uid``: the owning TFJob's uid, new on every run. It is replaced
  by the marker ``<tfjob uid>`` only when it equals the uid of the case's TFJob, so a wrong
  owner still shows up as a difference; so is the value of the ``training.kubeflow.org/job-uid``
  label (our addition, D154: the allowance ``training_operator_labels`` adds it to v0.5.3's
  pods as the marker);
- ``status`` of pods, services and PodGroups: written by the cluster (and, for pods, by the
  test's own stand-in kubelet), never by the operator;
- fields holding the value the Kubernetes API server defaults them to (pod ``dnsPolicy:
  ClusterFirst``, container ``terminationMessagePath``, service ``sessionAffinity: None``,
  port ``protocol: TCP``, a container's request equal to its limit, which the server defaults
  from the limit... see ``_POD_DEFAULTS`` and friends): once stored, an operator that wrote
  such a value and one that left it out are indistinguishable, and dropping them keeps the
  fixtures independent of how complete the local cluster's defaulting is;
- what the ServiceAccount admission plugin adds to every pod: ``serviceAccountName`` when it
  is ``default`` (and its deprecated alias ``serviceAccount``), the projected
  ``kube-api-access-<random>`` token volume and each container's mount of it;
- in the TFJob's status: the times of its conditions (``lastUpdateTime``,
  ``lastTransitionTime``) and ``startTime``/``completionTime``, whose presence is kept as the
  marker ``<time>``.

``generateName`` is kept (neither operator uses it: a difference there is real). Lists of
objects are sorted by namespace and name; every other list keeps its order (env, containers and
ports are ordered in Kubernetes). Objects are compared as JSON values, so key order does not
matter; TF_CONFIG is compared both parsed and as the exact string (see ``test_golden.py``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

TFJOB_UID = "<tfjob uid>"
JOB_UID_LABEL = "training.kubeflow.org/job-uid"
TIME = "<time>"
TF_CONFIG = "TF_CONFIG"

_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
)
_CONDITION_TIMES = ("lastUpdateTime", "lastTransitionTime")
_STATUS_TIMES = ("startTime", "completionTime")


# Kubernetes' own defaults (pkg/apis/core/v1/defaults.go, pkg/registry/core/service): a field
# holding exactly this value is dropped. ``imagePullPolicy`` depends on the image's tag.
_POD_DEFAULTS: dict[str, Any] = {
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "enableServiceLinks": True,
}
_CONTAINER_DEFAULTS: dict[str, Any] = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "resources": {},
}
_PROBE_DEFAULTS: dict[str, Any] = {
    "timeoutSeconds": 1,
    "periodSeconds": 10,
    "successThreshold": 1,
    "failureThreshold": 3,
}
# What kube-apiserver's admission adds to every pod (the Priority and DefaultTolerationSeconds
# plugins, plugin/pkg/admission): the emulator runs neither, so a pod on the real control plane
# carries them and one on the emulator (or in a fixture) does not.
_PRIORITY_DEFAULTS: dict[str, Any] = {"preemptionPolicy": "PreemptLowerPriority"}
_DEFAULT_TOLERATIONS = [
    {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
]
_SERVICE_DEFAULTS: dict[str, Any] = {
    "type": "ClusterIP",
    "sessionAffinity": "None",
    "ipFamilies": ["IPv4"],
    "ipFamilyPolicy": "SingleStack",
    "internalTrafficPolicy": "Cluster",
}


def _drop_defaults(fields: dict, defaults: dict[str, Any]) -> None:
    for key, value in defaults.items():
        if key in fields and fields[key] == value:
            del fields[key]


def _default_pull_policy(image: str) -> str:
    tagged = ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")
    return "IfNotPresent" if tagged or "@" in image else "Always"


def _drop_defaulted_requests(container: dict) -> None:
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for name in [n for n, value in requests.items() if limits.get(n) == value]:
        del requests[name]
    if "requests" in resources and not requests:
        del resources["requests"]


def _drop_service_account_admission(spec: dict) -> None:
    if spec.get("serviceAccount") == spec.get("serviceAccountName"):
        spec.pop("serviceAccount", None)
    _drop_defaults(spec, {"serviceAccountName": "default"})
    added = {
        v["name"]
        for v in spec.get("volumes") or []
        if v.get("name", "").startswith("kube-api-access-") and "projected" in v
    }
    if not added:
        return
    spec["volumes"] = [v for v in spec["volumes"] if v["name"] not in added]
    if not spec["volumes"]:
        del spec["volumes"]
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") not in added]
        if mounts:
            container["volumeMounts"] = mounts
        else:
            container.pop("volumeMounts", None)


def _drop_priority_and_toleration_admission(spec: dict) -> None:
    if not spec.get("priorityClassName"):
        _drop_defaults(spec, {"priority": 0})
    _drop_defaults(spec, _PRIORITY_DEFAULTS)
    if "tolerations" in spec:
        spec["tolerations"] = [t for t in spec["tolerations"] if t not in _DEFAULT_TOLERATIONS]
        if not spec["tolerations"]:
            del spec["tolerations"]


def _drop_container_field_defaults(container: dict) -> None:
    """Probe timings and a field reference's ``apiVersion`` (``v1``), as defaults.go sets them."""
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(container.get(probe), dict):
            _drop_defaults(container[probe], _PROBE_DEFAULTS)
    for env in container.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(ref, dict):
            _drop_defaults(ref, {"apiVersion": "v1"})


def _normalise_pod_spec(spec: dict) -> None:
    _drop_service_account_admission(spec)
    _drop_priority_and_toleration_admission(spec)
    _drop_defaults(spec, _POD_DEFAULTS)
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        _drop_defaulted_requests(container)
        _drop_defaults(container, _CONTAINER_DEFAULTS)
        _drop_container_field_defaults(container)
        if container.get("imagePullPolicy") == _default_pull_policy(container.get("image", "")):
            del container["imagePullPolicy"]
        for port in container.get("ports") or []:
            _drop_defaults(port, {"protocol": "TCP"})


def _drop_service_defaults(spec: dict) -> None:
    _drop_defaults(spec, _SERVICE_DEFAULTS)
    if spec.get("clusterIPs") == [spec.get("clusterIP")]:
        del spec["clusterIPs"]
    for port in spec.get("ports") or []:
        _drop_defaults(port, {"protocol": "TCP", "targetPort": port.get("port")})


def normalise_object(obj: dict, job_uid: str) -> dict:
    """A copy of a pod, service or PodGroup without what the server or run decided."""
    out = copy.deepcopy(obj)
    out.pop("status", None)
    if out.get("kind") == "Pod":
        _normalise_pod_spec(out.get("spec") or {})
    elif out.get("kind") == "Service":
        _drop_service_defaults(out.get("spec") or {})
    meta = out.get("metadata") or {}
    for key in _SERVER_METADATA:
        meta.pop(key, None)
    for ref in meta.get("ownerReferences") or []:
        if ref.get("uid") == job_uid:
            ref["uid"] = TFJOB_UID
    labels = meta.get("labels") or {}
    if labels.get(JOB_UID_LABEL) == job_uid:
        labels[JOB_UID_LABEL] = TFJOB_UID
    return out


def normalise_tfjob_status(status: dict | None) -> dict:
    """The TFJob's status without its times (their presence is kept as ``<time>``)."""
    out = copy.deepcopy(status or {})
    for cond in out.get("conditions") or []:
        for key in _CONDITION_TIMES:
            if key in cond:
                cond[key] = TIME
    for key in _STATUS_TIMES:
        if out.get(key):
            out[key] = TIME
    return out


def sort_objects(objs: list[dict]) -> list[dict]:
    return sorted(objs, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))


def dumps(value: Any) -> str:
    """The fixture file format: indented, sorted keys, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def tf_configs(pods: list[dict]) -> dict[tuple[str, str, int], str]:
    """Every TF_CONFIG value by ``(pod, container, position in env)``."""
    found = {}
    for pod in pods:
        for container in pod["spec"].get("containers") or []:
            for pos, env in enumerate(container.get("env") or []):
                if env.get("name") == TF_CONFIG:
                    found[(pod["metadata"]["name"], container["name"], pos)] = env.get("value")
    return found
