"""Quantities as kube-apiserver stores them: canonical strings in built-in kinds, as written in
custom resources; the exact strings and errors are apimachinery's (fixtures/quantities.json)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from localcluster.apimachinery import quantity as q
from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.serving.params import parse_json
from test.unit.localcluster.apiserver.test_apiserver_admission import widget_crd

PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")
PVCS = ("", "v1", "persistentvolumeclaims")
DEPLOY = ("apps", "v1", "deployments")
STS = ("apps", "v1", "statefulsets")
JOBS = ("batch", "v1", "jobs")
CRD = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = ("example.com", "v1", "widgets")
CASES = json.loads((Path(__file__).parent / "fixtures" / "quantities.json").read_text())["cases"]


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def pod_spec(resources: dict | None = None, **spec) -> dict:
    container = {"name": "main", "image": "busybox", "resources": resources or {}}
    return {"containers": [container], **spec}


def pod(resources: dict | None = None, name: str = "p", **spec) -> dict:
    return {"metadata": {"name": name}, "spec": pod_spec(resources, **spec)}


def template(resources: dict) -> dict:
    return {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec(resources)}


def resources_of(obj: dict, path: str = "spec") -> dict:
    spec = obj
    for key in path.split("."):
        spec = spec[key]
    return spec["containers"][0]["resources"]


@pytest.mark.parametrize(("sent", "outcome"), CASES, ids=[c[0] for c in CASES])
def test_every_recorded_case_is_stored_or_refused_as_apimachinery_does(reg, sent, outcome):
    value = parse_json(sent.encode())
    body = pod({"limits": {"cpu": value}})
    if outcome.get("stored", "").startswith("-"):  # decoded, then refused by validation
        with pytest.raises(StatusError) as info:
            reg.create(PODS, "default", body)
        causes = {c["field"]: c["message"] for c in info.value.status["details"]["causes"]}
        assert causes["spec.containers[0].resources.limits[cpu]"] == (
            f'Invalid value: "{outcome["stored"]}": must be greater than or equal to 0'
        )
    elif "stored" in outcome:
        created = reg.create(PODS, "default", body)
        assert resources_of(created) == {
            "limits": {"cpu": outcome["stored"]},
            "requests": {"cpu": outcome["stored"]},  # defaulted from the limit
        }
        assert resources_of(reg.get(PODS, "default", "p"))["limits"] == {"cpu": outcome["stored"]}
    else:
        with pytest.raises(StatusError) as info:
            reg.create(PODS, "default", body)
        assert info.value.code == 400
        assert info.value.message == (
            f'Pod in version "v1" cannot be handled as a Pod: {outcome["error"]}'
        )


def test_canonical_form_is_a_fixed_point():
    for sent, outcome in CASES:
        if "stored" in outcome:
            assert q.canonical(outcome["stored"]) == outcome["stored"], sent


def test_floats_without_their_text_are_read_as_go_writes_them():
    assert [q.go_float_text(v) for v in (1.0, 0.5, 1e-7, 1.5e21, 1e20, -0.25)] == [
        "1", "0.5", "1e-7", "1.5e+21", "100000000000000000000", "-0.25",
    ]  # fmt: skip
    assert q.canonical(0.1) == "100m" and q.canonical(2.0) == "2"


def test_every_quantity_of_a_pod_is_canonical_and_the_callers_body_is_untouched(reg):
    body = pod(
        {"requests": {"cpu": 0.5, "memory": "1.5Gi"}, "limits": {"cpu": 1, "memory": "2048Mi"}},
        overhead={"cpu": "250m", "memory": 1000},
        volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "1000Mi"}}, {"name": "other"}],
        initContainers=[
            {"name": "init", "image": "busybox", "resources": {"limits": {"cpu": "1000m"}}}
        ],
    )
    sent = json.dumps(body)
    spec = reg.create(PODS, "default", body)["spec"]
    assert json.dumps(body) == sent
    assert spec["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1536Mi"},
        "limits": {"cpu": "1", "memory": "2Gi"},
    }
    assert spec["overhead"] == {"cpu": "250m", "memory": "1k"}
    assert spec["volumes"] == [
        {"name": "scratch", "emptyDir": {"sizeLimit": "1000Mi"}},
        {"name": "other"},
    ]
    assert spec["initContainers"][0]["resources"] == {
        "limits": {"cpu": "1"},
        "requests": {"cpu": "1"},
    }


def test_a_json_number_keeps_the_form_it_was_written_in(reg):
    body = parse_json(
        b'{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i",'
        b'"resources":{"limits":{"cpu":1.500,"memory":1e9,"x.io/a":0.50,"x.io/b":2.0}}}]}}'
    )
    limits = resources_of(reg.create(PODS, "default", body))["requests"]  # as the limits
    assert limits == {"cpu": "1.500", "memory": "1e9", "x.io/a": "500m", "x.io/b": "2"}


def test_floats_elsewhere_are_stored_as_plain_floats(reg):
    reg.create(CRD, None, widget_crd())
    body = parse_json(b'{"metadata":{"name":"w"},"spec":{"ratio":1.50,"cpu":0.5,"mem":"1000m"}}')
    stored = reg.create(WIDGETS, "default", body)
    assert stored["spec"] == {"ratio": 1.5, "cpu": 0.5, "mem": "1000m"}  # CRs are not canonical
    assert type(stored["spec"]["ratio"]) is float


def test_a_null_in_a_resource_list_is_a_zero_quantity(reg):
    created = reg.create(PODS, "default", pod({"limits": {"cpu": None, "memory": "1Gi"}}))
    assert resources_of(created)["limits"] == {"cpu": "0", "memory": "1Gi"}


def test_a_resource_list_that_is_no_map_is_a_decoding_error(reg):
    with pytest.raises(StatusError) as info:
        reg.create(PODS, "default", pod(overhead=["1"]))
    assert info.value.code == 400
    assert info.value.message.endswith(
        "json: cannot unmarshal array into Go struct field PodSpec.spec.overhead of type "
        "v1.ResourceList"
    )


def test_rewriting_a_quantity_in_another_form_changes_nothing(reg):
    created = reg.create(PODS, "default", pod({"limits": {"cpu": "1"}}))
    again = copy.deepcopy(created)
    resources_of(again)["limits"]["cpu"] = "1000m"
    updated = reg.update(PODS, "default", "p", again)
    assert updated["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_patches_are_canonical_too(reg):
    reg.create(PODS, "default", pod({"requests": {"cpu": "250m"}}))
    patch = {"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": 2.0}}}]}}
    patched = reg.patch(PODS, "default", "p", patch, "strategic")
    assert resources_of(patched) == {"limits": {"cpu": "2"}, "requests": {"cpu": "250m"}}


def test_validation_speaks_in_canonical_quantities(reg):
    body = pod({"requests": {"cpu": "2000m"}, "limits": {"cpu": 1.0}})
    with pytest.raises(StatusError) as info:
        reg.create(PODS, "default", body)
    (cause,) = info.value.status["details"]["causes"]
    assert cause["message"] == 'Invalid value: "2": must be less than or equal to cpu limit of 1'


def test_node_capacity_and_allocatable(reg):
    node = {
        "metadata": {"name": "n1"},
        "status": {
            "capacity": {"cpu": 8, "memory": "16384Mi", "pods": 110},
            "allocatable": {"cpu": "7500m", "memory": 17179869184},
        },
    }
    status = reg.create(NODES, None, node)["status"]
    assert status["capacity"] == {"cpu": "8", "memory": "16Gi", "pods": "110"}
    assert status["allocatable"] == {"cpu": "7500m", "memory": "17179869184"}
    status_update = {**reg.get(NODES, None, "n1"), "status": {"capacity": {"cpu": 4.0}}}
    updated = reg.update(NODES, None, "n1", status_update, subresource="status")
    assert updated["status"] == {"capacity": {"cpu": "4"}}


def test_pod_status_resources(reg):
    reg.create(PODS, "default", pod())
    current = reg.get(PODS, "default", "p")
    current["status"] = {
        "containerStatuses": [
            {
                "name": "main",
                "allocatedResources": {"cpu": 0.5},
                "resources": {"limits": {"cpu": 1}},
            }
        ]
    }
    status = reg.update(PODS, "default", "p", current, subresource="status")["status"]
    assert status["containerStatuses"][0]["allocatedResources"] == {"cpu": "500m"}
    assert status["containerStatuses"][0]["resources"] == {"limits": {"cpu": "1"}}


@pytest.mark.parametrize("gvr", [DEPLOY, JOBS])
def test_workload_pod_templates(reg, gvr):
    spec: dict = {"template": template({"limits": {"cpu": 2, "memory": "0.5Gi"}})}
    if gvr == DEPLOY:
        spec["selector"] = {"matchLabels": {"app": "a"}}
    else:
        spec["template"]["spec"]["restartPolicy"] = "Never"
    created = reg.create(gvr, "default", {"metadata": {"name": "w"}, "spec": spec})
    assert resources_of(created, "spec.template.spec")["limits"] == {
        "cpu": "2",
        "memory": "512Mi",
    }


def test_statefulset_claim_templates_and_claims(reg):
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": 1e9}}}}
    sts = {
        "metadata": {"name": "s"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "serviceName": "s",
            "template": template({}),
            "volumeClaimTemplates": [claim],
        },
    }
    created = reg.create(STS, "default", sts)
    assert created["spec"]["volumeClaimTemplates"][0]["spec"]["resources"] == {
        "requests": {"storage": "1G"}
    }
    pvc = reg.create(PVCS, "default", {"metadata": {"name": "c"}, "spec": claim["spec"]})
    assert pvc["spec"]["resources"] == {"requests": {"storage": "1G"}}


def test_limits_default_the_missing_requests_of_pods_not_of_templates(reg):
    spec = pod({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})["spec"]
    created = reg.create(PODS, "default", {"metadata": {"name": "p"}, "spec": spec})
    assert resources_of(created)["requests"] == {"cpu": "500m", "memory": "1Gi"}
    deployment = {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template(spec)},
    }
    deployment["spec"]["template"]["spec"] = spec
    stored = reg.create(DEPLOY, "default", deployment)
    assert resources_of(stored, "spec.template.spec")["requests"] == {"cpu": "500m"}


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        ([{}], "BestEffort"),
        ([{"limits": {"cpu": "0"}}], "BestEffort"),  # only positive amounts count
        ([{"limits": {"nvidia.com/gpu": "1"}}], "BestEffort"),  # only cpu and memory count
        ([{"limits": {"cpu": "1", "memory": "1Gi"}}], "Guaranteed"),  # requests defaulted
        ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m"}}], "Guaranteed"),
        ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1m"}}], "Burstable"),
        ([{"limits": {"cpu": "1", "memory": "1Gi"}}, {"requests": {"cpu": "1"}}], "Burstable"),
        ([{"requests": {"memory": "1Gi"}}], "Burstable"),
    ],
)
def test_a_new_pod_records_its_qos_class(reg, containers, qos):
    spec = {
        "containers": [
            {"name": f"c{i}", "image": "i", "resources": r} for i, r in enumerate(containers)
        ]
    }
    created = reg.create(PODS, "default", {"metadata": {"name": "p"}, "spec": spec})
    assert created["status"] == {"phase": "Pending", "qosClass": qos}


def test_init_containers_count_for_the_qos_class(reg):
    full = {"limits": {"cpu": "1", "memory": "1Gi"}}
    spec = pod_spec(full, initContainers=[{"name": "i", "image": "i", "resources": {}}])
    assert (
        reg.create(PODS, "default", {"metadata": {"name": "p"}, "spec": spec})["status"]["qosClass"]
        == "Burstable"
    )
