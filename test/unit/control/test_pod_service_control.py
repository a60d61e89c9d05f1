"""PodControl / ServiceControl against the fake API: bodies, events, delete rules."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.pod_control import PodControl
from tf_operator.control.service_control import ServiceControl
from tf_operator.k8s.client import PODS, SERVICES, ApiError, new_internal_error

OWNER = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "name": "job",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "job", "namespace": "ns"},
}
TEMPLATE = {
    "metadata": {
        "name": "job-worker-0",
        "labels": {"a": "b"},
        "annotations": {"x": "y"},
        "ownerReferences": [{"kind": "Other", "uid": "zzz"}],
    },
    "spec": {"containers": [{"name": "tensorflow", "image": "i"}]},
}


@pytest.fixture
def env():
    return FakeKubeClient(), FakeRecorder()


def test_create_pod_copies_template_and_sets_only_our_owner(env):
    client, recorder = env
    PodControl(client, recorder).create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    pod = client.resource(PODS).get("job-worker-0", "ns")
    assert pod["metadata"]["labels"] == {"a": "b"}
    assert pod["metadata"]["annotations"] == {"x": "y"}
    assert pod["metadata"]["ownerReferences"] == [OWNER]
    assert pod["spec"]["containers"][0]["image"] == "i"
    assert recorder.events == ["Normal SuccessfulCreatePod Created pod: job-worker-0"]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("controller", False, "Controller is not set"),
        ("blockOwnerDeletion", None, "BlockOwnerDeletion"),
        ("apiVersion", "", "empty APIVersion"),
        ("kind", "", "empty Kind"),
    ],
)
def test_create_refuses_bad_owner_refs(env, field, value, message):
    client, recorder = env
    owner = {**OWNER, field: value}
    with pytest.raises(ValueError, match=message):
        PodControl(client, recorder).create_pods_with_controller_ref("ns", TEMPLATE, JOB, owner)
    assert client.actions == []


def test_create_refuses_empty_labels(env):
    client, recorder = env
    template = {"metadata": {"name": "p"}, "spec": {}}
    with pytest.raises(ValueError, match="no labels"):
        PodControl(client, recorder).create_pods_with_controller_ref("ns", template, JOB, OWNER)


def test_create_failure_records_warning(env):
    client, recorder = env
    PodControl(client, recorder).create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    with pytest.raises(ApiError, match="already exists"):
        PodControl(client, recorder).create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    assert recorder.events[-1].startswith("Warning FailedCreatePod Error creating: ")


def test_delete_pod_rules(env):
    client, recorder = env
    control = PodControl(client, recorder)
    assert control.delete_pod("ns", "missing", JOB) is False
    control.create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    recorder.clear()
    assert control.delete_pod("ns", "job-worker-0", JOB) is True
    assert recorder.events == ["Normal SuccessfulDeletePod Deleted pod: job-worker-0"]
    verbs = [(a.verb, a.name) for a in client.actions if a.resource_plural == "pods"]
    assert verbs[-2:] == [("get", "job-worker-0"), ("delete", "job-worker-0")]


def test_delete_pod_skips_terminating(env):
    client, recorder = env
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "deletionTimestamp": "2020-01-01T00:00:00Z"}
    }
    client.prepend_reactor("get", "pods", lambda a: (True, pod))
    assert PodControl(client, recorder).delete_pod("ns", "p", JOB) is False
    assert not client.filter_actions("delete", "pods")


def test_delete_pod_failure_records_warning(env):
    client, recorder = env
    control = PodControl(client, recorder)
    control.create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    client.prepend_reactor("delete", "pods", lambda a: (True, new_internal_error("boom")))
    with pytest.raises(RuntimeError, match="unable to delete pods"):
        control.delete_pod("ns", "job-worker-0", JOB)
    assert recorder.events[-1].startswith("Warning FailedDeletePod Error deleting: ")


def test_service_create_and_delete(env):
    client, recorder = env
    control = ServiceControl(client, recorder)
    svc = {
        "metadata": {"name": "job-worker-0", "labels": {"a": "b"}},
        "spec": {"clusterIP": "None"},
    }
    control.create_services_with_controller_ref("ns", svc, JOB, OWNER)
    stored = client.resource(SERVICES).get("job-worker-0", "ns")
    assert stored["metadata"]["ownerReferences"] == [OWNER]
    assert control.delete_service("ns", "job-worker-0", JOB) is True
    assert control.delete_service("ns", "job-worker-0", JOB) is False
    assert recorder.events == [
        "Normal SuccessfulCreateService Created service: job-worker-0",
        "Normal SuccessfulDeleteService Deleted service: job-worker-0",
    ]


def test_delete_by_uid_deletes_that_object_without_reading_it(env):
    client, recorder = env
    control = PodControl(client, recorder)
    created = control.create_pods_with_controller_ref("ns", TEMPLATE, JOB, OWNER)
    recorder.clear()
    uid = created["metadata"]["uid"]
    assert control.delete_pod("ns", "job-worker-0", JOB, seen=created) is True
    pod_actions = [a for a in client.actions if a.resource_plural == "pods"]
    assert [(a.verb, a.name) for a in pod_actions][-1:] == [("delete", "job-worker-0")]
    assert not client.filter_actions("get", "pods")
    assert pod_actions[-1].options["preconditions_uid"] == uid
    assert recorder.events == ["Normal SuccessfulDeletePod Deleted pod: job-worker-0"]
    assert control.delete_pod("ns", "job-worker-0", JOB, seen=created) is False  # gone


def test_delete_by_uid_spares_a_newer_object_of_the_same_name(env):
    client, recorder = env
    control = ServiceControl(client, recorder)
    svc = {"metadata": {"name": "job-worker-0", "labels": {"a": "b"}}, "spec": {}}
    control.create_services_with_controller_ref("ns", svc, JOB, OWNER)
    recorder.clear()
    older = {"metadata": {"name": "job-worker-0", "uid": "an-older-uid"}}
    assert control.delete_service("ns", "job-worker-0", JOB, seen=older) is False
    assert client.resource(SERVICES).get("job-worker-0", "ns")["metadata"]["name"]
    assert recorder.events == []


def test_a_created_service_is_logged_at_debug_and_no_logger_is_built_otherwise(
    env, caplog, monkeypatch
):
    from tf_operator.control import service_control

    client, recorder = env
    control = ServiceControl(client, recorder)
    service = {"metadata": {"name": "job-worker-0", "labels": {"a": "b"}}, "spec": {}}
    with caplog.at_level("DEBUG", logger="tf_operator"):
        control.create_services_with_controller_ref("ns", service, JOB, OWNER)
    assert "Controller created service job-worker-0" in caplog.messages

    built = []
    monkeypatch.setattr(service_control, "job_logger", lambda obj: built.append(obj))
    with caplog.at_level("INFO", logger="tf_operator"):
        control.create_services_with_controller_ref(
            "ns",
            {**service, "metadata": {**service["metadata"], "name": "job-worker-1"}},
            JOB,
            OWNER,
        )
    assert built == []
