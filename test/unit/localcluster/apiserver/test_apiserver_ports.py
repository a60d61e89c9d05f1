"""Ports, tolerations and huge quantities as kube-apiserver answers them (issue 27): a
wrong JSON type is a 400 from the decoder, a value out of range a 422 with the field named,
and nothing is a 500."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry, StatusError

PODS, SERVICES = ("", "v1", "pods"), ("", "v1", "services")
_names = iter(range(10**6))


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    yield r
    r.stop()


def pod(**container) -> dict:
    spec = {"containers": [{"name": "c", "image": "i", **container}]}
    return {"metadata": {"name": f"p{next(_names)}"}, "spec": spec}


def refused(reg, gvr, body) -> tuple[int, str]:
    with pytest.raises(StatusError) as err:
        reg.create(gvr, "default", body)
    return err.value.code, err.value.message


@pytest.mark.parametrize(
    ("port", "code", "message"),
    [
        (
            70000,
            422,
            "ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (-1, 422, "containerPort: Invalid value: -1: must be between 1 and 65535, inclusive"),
        (0, 422, "spec.containers[0].ports[0].containerPort: Required value"),
        (
            True,
            400,
            "cannot unmarshal bool into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
        (2222.5, 400, "cannot unmarshal number 2222.5 into Go struct field"),
        ("2222", 400, "cannot unmarshal string into Go struct field ContainerPort"),
        (2**31, 400, "cannot unmarshal number 2147483648 into Go struct field"),
    ],
)
def test_container_ports(reg, port, code, message):
    assert refused(reg, PODS, pod(ports=[{"containerPort": port}]))[0] == code
    assert message in refused(reg, PODS, pod(ports=[{"containerPort": port}]))[1]


def test_container_port_names_protocols_and_host_ports(reg):
    ports = [
        {"name": "Not_IANA", "containerPort": 80},
        {"name": "http", "containerPort": 81, "hostPort": 70000},
        {"name": "http", "containerPort": 82, "protocol": "XTP"},
    ]
    code, message = refused(reg, PODS, pod(ports=ports))
    assert code == 422
    assert 'ports[0].name: Invalid value: "Not_IANA": must contain only alpha-numeric' in message
    assert "ports[1].hostPort: Invalid value: 70000" in message
    assert 'ports[2].name: Duplicate value: "http"' in message
    assert (
        'ports[2].protocol: Unsupported value: "XTP": supported values: "SCTP", "TCP", "UDP"'
        in message
    )
    ok = reg.create(PODS, "default", pod(ports=[{"name": "tfjob-port", "containerPort": 2222}]))
    assert ok["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"


@pytest.mark.parametrize(
    ("ports", "code", "message"),
    [
        ([{"port": 70000}], 422, "spec.ports[0].port: Invalid value: 70000"),
        (
            [{"port": 80, "targetPort": 70000}],
            422,
            "spec.ports[0].targetPort: Invalid value: 70000",
        ),
        ([{"port": 80, "targetPort": "x" * 16}], 422, "must be no more than 15 characters"),
        ([{"port": 80}, {"port": 81}], 422, "spec.ports[0].name: Required value"),
        (
            [{"port": "80"}],
            400,
            "cannot unmarshal string into Go struct field ServicePort.spec.ports.port",
        ),
        (
            [{"port": 80, "targetPort": 80.5}],
            400,
            "cannot unmarshal number 80.5 into Go value of type int32",
        ),
    ],
)
def test_service_ports(reg, ports, code, message):
    body = {"metadata": {"name": f"s{next(_names)}"}, "spec": {"ports": ports}}
    got_code, got_message = refused(reg, SERVICES, body)
    assert got_code == code and message in got_message


@pytest.mark.parametrize(
    ("toleration", "code", "message"),
    [
        (
            {"key": "a", "operator": "Bogus"},
            422,
            'Unsupported value: "Bogus": supported values: "Equal", "Exists"',
        ),
        (
            {"operator": "Exists", "value": "x"},
            422,
            "value must be empty when `operator` is 'Exists'",
        ),
        ({"key": "a", "effect": "Nope"}, 422, 'tolerations[0].effect: Unsupported value: "Nope"'),
        (
            {"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5},
            422,
            "effect must be 'NoExecute'",
        ),
        ({"value": "x"}, 422, "operator must be Exists when `key` is empty"),
        ({"key": "a b"}, 422, 'tolerations[0].key: Invalid value: "a b"'),
        (
            {"key": "a", "tolerationSeconds": "5"},
            400,
            "Toleration.spec.tolerations.tolerationSeconds of type int64",
        ),
        (
            "x",
            400,
            "cannot unmarshal string into Go struct field PodSpec.spec.tolerations of type v1.Toleration",
        ),
    ],
)
def test_tolerations(reg, toleration, code, message):
    body = pod()
    body["spec"]["tolerations"] = [toleration]
    got_code, got_message = refused(reg, PODS, body)
    assert got_code == code and message in got_message


def test_good_tolerations_are_admitted(reg):
    body = pod()
    body["spec"]["tolerations"] = [
        {"operator": "Exists"},
        {"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
    ]  # fmt: skip
    assert reg.create(PODS, "default", body)


def test_a_quantity_with_a_huge_exponent_is_stored_as_apimachinery_keeps_it(reg):
    """``cpu: 1e999999999`` parses (apimachinery keeps the exponent in an int32); the
    local API server answered 500 (a Decimal overflow computing the QoS class)."""
    created = reg.create(PODS, "default", pod(resources={"requests": {"cpu": "1e999999999"}}))
    assert created["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1e999999999"
    assert created["status"]["qosClass"] == "Burstable"
