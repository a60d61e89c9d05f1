"""Admission as kube-apiserver does it: names per kind, decoding errors (400) before validation
(422), quantities, node selectors and affinity, the 256 KiB annotation budget (issue 13, #2, #5, #9)."""

from __future__ import annotations

import pytest

from localcluster.apimachinery import quantity as q
from localcluster.controlplane.emulated import Registry, StatusError

CM = ("", "v1", "configmaps")
PODS = ("", "v1", "pods")
SVC = ("", "v1", "services")
NS = ("", "v1", "namespaces")
DEPLOY = ("apps", "v1", "deployments")
CRD = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = ("example.com", "v1", "widgets")
QUANTITY_MSG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def error(fn, *args) -> StatusError:
    with pytest.raises(StatusError) as info:
        fn(*args)
    return info.value


def pod(name: str = "p", **container) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "busybox", **container}]},
    }


def widget_crd() -> dict:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


# ------------------------------------------------------------------ names (finding 5)
@pytest.mark.parametrize("name", ["UpperCase", "a b", "-lead", "a_b", "naïve", "trail-", "x" * 254])
def test_custom_resource_names_must_be_dns_subdomains(reg, name):
    reg.create(CRD, None, widget_crd())
    err = error(reg.create, WIDGETS, "default", {"metadata": {"name": name}})
    assert (err.code, err.reason) == (422, "Invalid")
    causes = err.status["details"]["causes"]
    assert all(c["field"] == "metadata.name" for c in causes)
    assert any("RFC 1123 subdomain" in c["message"] or "253" in c["message"] for c in causes)
    assert err.status["details"]["kind"] == "Widget"


def test_custom_resource_name_may_have_dots_like_the_real_server(reg):
    reg.create(CRD, None, widget_crd())
    assert reg.create(WIDGETS, "default", {"metadata": {"name": "my.job"}})["metadata"]["name"]


def test_too_long_subdomain_names_say_so(reg):
    err = error(reg.create, CM, "default", {"metadata": {"name": "a" * 254}})
    assert err.status["details"]["causes"][0]["message"].endswith(
        "must be no more than 253 characters"
    )


@pytest.mark.parametrize("name", ["1abc", "a.b", "Abc", "a" * 64])
def test_service_names_are_dns_1035_labels(reg, name):
    body = {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}}
    err = error(reg.create, SVC, "default", body)
    assert err.code == 422
    assert err.status["details"]["causes"][0]["field"] == "metadata.name"


def test_dns_1035_message_is_the_real_one(reg):
    err = error(reg.create, SVC, "default", {"metadata": {"name": "0svc"}, "spec": {}})
    assert err.message == (
        'Service "0svc" is invalid: metadata.name: Invalid value: "0svc": a DNS-1035 label must '
        "consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
        "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )


def test_namespace_names_are_dns_labels(reg):
    assert error(reg.create, NS, None, {"metadata": {"name": "a.b"}}).code == 422
    assert reg.create(NS, None, {"metadata": {"name": "team-1"}})


def test_non_string_name_is_a_decoding_error(reg):
    err = error(reg.create, CM, "default", {"metadata": {"name": 7}})
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ObjectMeta.metadata.name of type string"
    )


# ------------------------------------------------------------------ quantities (finding 2)
def test_unparsable_quantity_is_rejected_like_the_real_server(reg):
    err = error(reg.create, PODS, "default", pod(resources={"requests": {"cpu": "lots"}}))
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message == f'Pod in version "v1" cannot be handled as a Pod: {QUANTITY_MSG}'


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (".e-10", q.NUMERIC_WRONG),
        ("1.2.3", QUANTITY_MSG),
        ("1mi", q.SUFFIX_WRONG),
        (True, QUANTITY_MSG),
        ({}, QUANTITY_MSG),
    ],
)
def test_every_quantity_error_text(reg, value, why):
    err = error(reg.create, PODS, "default", pod(resources={"limits": {"memory": value}}))
    assert err.code == 400 and err.message.endswith(why)


@pytest.mark.parametrize("ports", [5, "x", [5], [{"containerPort": 1}, "x"]])
def test_ports_that_are_not_a_list_of_objects_are_a_decoding_error(reg, ports):
    # A TypeError in defaulting answered these with a 500 (found by the operator's fuzz test).
    body = pod()
    body["spec"]["containers"][0]["ports"] = ports
    err = error(reg.create, PODS, "default", body)
    assert (err.code, err.reason) == (400, "BadRequest")
    assert "cannot unmarshal" in err.message and ".ports of type" in err.message


def test_quantities_in_workload_templates_are_checked_too(reg):
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod()["spec"]},
        },
    }
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "x"}}
    err = error(reg.create, DEPLOY, "default", body)
    assert err.message.startswith('Deployment in version "v1" cannot be handled as a Deployment')


def test_negative_quantities_and_requests_above_limits_are_invalid(reg):
    body = pod(resources={"requests": {"cpu": "2", "memory": "-1"}, "limits": {"cpu": "1"}})
    err = error(reg.create, PODS, "default", body)
    assert err.code == 422
    fields = {c["field"]: c["message"] for c in err.status["details"]["causes"]}
    assert fields["spec.containers[0].resources.requests[memory]"] == (
        'Invalid value: "-1": must be greater than or equal to 0'
    )
    assert fields["spec.containers[0].resources.requests[cpu]"] == (
        'Invalid value: "2": must be less than or equal to cpu limit of 1'
    )


def test_valid_quantities_are_accepted(reg):
    resources = {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": 1, "memory": "2e9"},
    }
    assert reg.create(PODS, "default", pod(resources=resources))["spec"]


def test_quantity_parsing():
    assert q.parse("1.5Gi") == 1.5 * 2**30
    assert q.parse("100m") * 10 == 1
    assert q.parse("2e3") == 2000 and q.parse(4) == 4 and q.parse(".5") * 2 == 1
    for bad in ("", "lots", "1 Gi", "--1", "1.2.3", "1mi", None, float("inf")):
        with pytest.raises(q.QuantityError):
            q.parse(bad)


# ------------------------------------------------------------------ node selection (finding 2)
def test_node_selector_values_must_be_strings_and_labels(reg):
    body = pod()
    body["spec"]["nodeSelector"] = {"disk": 1}
    assert error(reg.create, PODS, "default", body).code == 400
    body["spec"]["nodeSelector"] = {"disk": "a b"}
    err = error(reg.create, PODS, "default", body)
    assert err.code == 422
    assert err.status["details"]["causes"][0]["field"] == "spec.nodeSelector"


def test_node_affinity_operators_and_values_are_checked(reg):
    body = pod()
    term = {
        "matchExpressions": [
            {"key": "zone", "operator": "Near", "values": ["a"]},
            {"key": "zone", "operator": "In", "values": []},
            {"key": "rank", "operator": "Gt", "values": ["high"]},
        ]
    }
    body["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    err = error(reg.create, PODS, "default", body)
    base = (
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions"
    )
    assert [c["field"] for c in err.status["details"]["causes"]] == [
        f"{base}[0].operator",
        f"{base}[1].values",
        f"{base}[2].values[0]",
    ]


# ------------------------------------------------------------------ annotations (finding 9)
def test_annotations_above_256_kib_are_too_long(reg):
    body = {"metadata": {"name": "big", "annotations": {"a": "x" * (256 * 1024)}}}
    err = error(reg.create, CM, "default", body)
    cause = err.status["details"]["causes"][0]
    assert cause == {
        "reason": "FieldValueTooLong",
        "message": "Too long: may not be more than 262144 bytes",
        "field": "metadata.annotations",
    }
    body["metadata"]["annotations"] = {"a": "x" * (256 * 1024 - 1)}
    assert reg.create(CM, "default", body)


def test_several_causes_are_bracketed_like_an_aggregate(reg):
    err = error(
        reg.create, PODS, "default", {"metadata": {"name": "p"}, "spec": {"containers": [{}]}}
    )
    assert err.message == (
        'Pod "p" is invalid: [spec.containers[0].name: Required value, '
        "spec.containers[0].image: Required value]"
    )
