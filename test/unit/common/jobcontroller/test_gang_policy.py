"""What a job asks of its PodGroup: training-operator v1.9's schedulingPolicy with its defaults,
and minResources computed as v1.9's CalcPGMinResources does."""

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.gang_policy import PriorityClasses, gang_policy, min_resources
from tf_operator.control.podgroup_control import KUBE_BATCH, VOLCANO, GangPolicy
from tf_operator.k8s.client import PRIORITY_CLASSES, new_internal_error


def container(requests=None, limits=None, name="tensorflow"):
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "tf:1", "resources": resources}


def replica(replicas, *containers, priority_class=None, init=()):
    spec = {"containers": list(containers)}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if init:
        spec["initContainers"] = list(init)
    return {"replicas": replicas, "template": {"spec": spec}}


def tfjob(specs, scheduling=None):
    spec = {"tfReplicaSpecs": specs}
    if scheduling is not None:
        spec["runPolicy"] = {"schedulingPolicy": scheduling}
    job = TFJob.from_dict({"metadata": {"name": "j", "namespace": "ns"}, "spec": spec})
    set_defaults_tfjob(job)
    return job


PRIORITIES = {"high": 1000, "low": 10}


def priority_of(name):
    return PRIORITIES.get(name, 0)


def test_min_member_is_min_available_else_every_replica():
    specs = {"PS": replica(1, container()), "Worker": replica(3, container())}
    assert gang_policy(tfjob(specs), KUBE_BATCH, priority_of) == GangPolicy(4)
    asked = tfjob(specs, {"minAvailable": 2, "queue": "q", "priorityClass": "high"})
    assert gang_policy(asked, KUBE_BATCH, priority_of) == GangPolicy(
        2, queue="q", priority_class_name="high"
    )


def test_min_task_member_is_keyed_by_task_name():
    """D77: replica types in any case become the pods' volcano.sh/task-spec names."""
    specs = {"PS": replica(1, container()), "Worker": replica(3, container())}
    asked = tfjob(specs, {"minTaskMember": {"PS": 1, "worker": 2}})
    assert gang_policy(asked, VOLCANO, priority_of).min_task_member == {"ps": 1, "worker": 2}
    assert gang_policy(tfjob(specs), VOLCANO, priority_of).min_task_member is None


def test_min_resources_only_for_a_backend_that_wants_them_and_as_written_when_given():
    specs = {"Worker": replica(2, container({"cpu": "1"}))}
    assert gang_policy(tfjob(specs), KUBE_BATCH, priority_of).min_resources is None
    assert gang_policy(tfjob(specs), VOLCANO, priority_of).min_resources == {"cpu": "2"}
    written = tfjob(specs, {"minResources": {"cpu": 3}})
    assert gang_policy(written, VOLCANO, priority_of).min_resources == {"cpu": 3}


@pytest.mark.parametrize(
    "specs, min_member, expected",
    [
        pytest.param(
            {"Worker": replica(2, container({"cpu": "1", "memory": "1Gi"}))},
            2,
            {"cpu": "2", "memory": "2Gi"},
            id="every pod",
        ),
        pytest.param(
            {"Worker": replica(4, container({"cpu": "500m"}))},
            3,
            {"cpu": "1500m"},
            id="only the first minMember pods",
        ),
        pytest.param(
            {
                "PS": replica(1, container({"cpu": "4"}), priority_class="low"),
                "Worker": replica(2, container({"cpu": "1"}), priority_class="high"),
            },
            2,
            {"cpu": "2"},
            id="the higher priority's pods first",
        ),
        pytest.param(
            {
                "PS": replica(1, container({"cpu": "4"}), priority_class="missing"),
                "Worker": replica(1, container({"cpu": "1"})),
            },
            1,
            {"cpu": "4"},
            id="equal priorities keep the replica order",
        ),
        pytest.param(
            {"Worker": replica(1, container(limits={"cpu": "2"}))},
            1,
            {"cpu": "2"},
            id="limits where no requests are stated",
        ),
        pytest.param(
            {"Worker": replica(1, container(requests={}, limits={"cpu": "2"}))},
            1,
            {},
            id="no limits where requests are stated, even empty",
        ),
        pytest.param(
            {
                "Worker": replica(
                    1,
                    container({"cpu": "1"}),
                    container({"cpu": "250m", "nvidia.com/gpu": "1"}, name="sidecar"),
                    init=[container({"cpu": "8"}, name="init")],
                )
            },
            1,
            {"cpu": "1250m", "nvidia.com/gpu": "1"},
            id="every container, no init container",
        ),
        pytest.param(
            {"Worker": replica(2, container({"memory": "1Gi"}), container({"memory": "512Mi"}))},
            2,
            {"memory": "3Gi"},
            id="sums in Go's canonical form",
        ),
    ],
)
def test_min_resources(specs, min_member, expected):
    job = tfjob(specs)
    assert min_resources(min_member, job.replica_specs(), priority_of) == expected


def test_priority_classes_are_read_once_and_count_0_when_unreadable():
    client = FakeKubeClient()
    classes = client.resource(PRIORITY_CLASSES)
    classes.create({"metadata": {"name": "high"}, "value": 1000})
    priorities = PriorityClasses(client)
    client.clear_actions()
    assert priorities.value("high") == 1000
    assert priorities.value("high") == 1000
    assert priorities.value("") == 0
    assert [(a.verb, a.name) for a in client.actions] == [("get", "high")]
    client.prepend_reactor("get", "priorityclasses", lambda a: (True, new_internal_error("no")))
    assert priorities.value("other") == 0
    assert priorities.value("other") == 0  # a failure is not retried every pass
    assert [a.name for a in client.filter_actions("get", "priorityclasses")] == ["high", "other"]
