"""CRD validation rules (x-kubernetes-validations) as apiextensions-apiserver evaluates them."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.admission import celrules

CRD = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
GADGETS = ("example.com", "v1", "gadgets")


def gadget_crd(spec_rules=None, root_rules=None, item_rules=None, size_schema=None) -> dict:
    spec = {
        "type": "object",
        "properties": {
            "size": size_schema or {"type": "integer"},
            "mode": {"type": "string"},
            "ports": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    "x-kubernetes-validations": item_rules or [],
                },
            },
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "x-kubernetes-validations": spec_rules or [],
    }
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": spec,
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
        "x-kubernetes-validations": root_rules or [],
    }
    return {
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def gadget(name="g", **spec) -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    }


def invalid(fn, *args) -> dict:
    with pytest.raises(StatusError) as info:
        fn(*args)
    assert (info.value.code, info.value.reason) == (422, "Invalid")
    return info.value.status


def test_a_false_rule_is_a_422_with_the_real_message(reg):
    """kube-apiserver leaves an object's or an array's value out of a false rule's cause and
    prints a scalar's own value (not its type, which it prints for a rule that fails to run)."""
    reg.create(CRD, None, gadget_crd(spec_rules=[{"rule": "self.size >= 0"}]))
    status = invalid(reg.create, GADGETS, "default", gadget(size=-1))
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: failed rule: self.size >= 0",
            "field": "spec",
        }
    ]
    assert status["message"] == (
        'Gadget.example.com "g" is invalid: spec: Invalid value: failed rule: self.size >= 0'
    )
    assert reg.create(GADGETS, "default", gadget(size=0))


def test_message_message_expression_reason_and_field_path(reg):
    rules = [
        {"rule": "self.size < 10", "message": "size must be below 10"},
        {
            "rule": "self.mode != 'x'",
            "messageExpression": "'mode ' + self.mode + ' is reserved'",
            "fieldPath": ".mode",
            "reason": "FieldValueForbidden",
        },
    ]
    reg.create(CRD, None, gadget_crd(spec_rules=rules))
    causes = invalid(reg.create, GADGETS, "default", gadget(size=11, mode="x"))["details"]["causes"]
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: size must be below 10",
            "field": "spec",
        },
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: mode x is reserved",
            "field": "spec.mode",
        },
    ]


def test_root_rules_see_the_name_only(reg):
    rules = [
        {"rule": "self.metadata.name.size() <= 5", "message": "name too long"},
        {"rule": "!has(self.metadata.labels)", "message": "labels are not visible"},
    ]
    reg.create(CRD, None, gadget_crd(root_rules=rules))
    body = gadget("toolong")
    body["metadata"]["labels"] = {"a": "b"}
    causes = invalid(reg.create, GADGETS, "default", body)["details"]["causes"]
    assert [(c["field"], c["message"]) for c in causes] == [
        ("<nil>", "Invalid value: name too long")
    ]


def test_rules_on_items_and_map_values_use_their_paths(reg):
    item_rules = [{"rule": "self.port > 0 && self.name.lowerAscii() == self.name"}]
    crd = gadget_crd(item_rules=item_rules)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "tags"
    ]["additionalProperties"]["x-kubernetes-validations"] = [{"rule": "self.startsWith('v')"}]
    reg.create(CRD, None, crd)
    body = gadget(
        ports=[{"name": "ok", "port": 1}, {"name": "Bad", "port": 2}], tags={"a": "v1", "b": "x"}
    )
    fields = [
        c["field"] for c in invalid(reg.create, GADGETS, "default", body)["details"]["causes"]
    ]
    assert fields == ["spec.ports[1]", "spec.tags[b]"]


def test_runtime_errors_are_reported_with_the_rule(reg):
    reg.create(CRD, None, gadget_crd(spec_rules=[{"rule": "self.mode == 'a'"}]))
    cause = invalid(reg.create, GADGETS, "default", gadget(size=1))["details"]["causes"][0]
    assert cause["message"] == (
        "Invalid value: \"object\": no such key: mode evaluating rule: self.mode == 'a'"
    )


def test_transition_rules_run_on_updates_only(reg):
    rules = [{"rule": "self.size >= oldSelf.size", "message": "size may not shrink"}]
    reg.create(CRD, None, gadget_crd(spec_rules=rules))
    created = reg.create(GADGETS, "default", gadget(size=5))
    smaller = {**created, "spec": {"size": 4}}
    cause = invalid(reg.update, GADGETS, "default", "g", smaller)["details"]["causes"][0]
    assert cause["message"] == "Invalid value: size may not shrink"
    assert reg.patch(GADGETS, "default", "g", {"spec": {"size": 6}}, "merge")["spec"]["size"] == 6


def test_immutability_with_old_self(reg):
    size = {
        "type": "integer",
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "size is immutable"}],
    }
    reg.create(CRD, None, gadget_crd(size_schema=size))
    reg.create(GADGETS, "default", gadget(size=1, mode="a"))
    assert (
        reg.patch(GADGETS, "default", "g", {"spec": {"mode": "b"}}, "merge")["spec"]["mode"] == "b"
    )
    cause = invalid(reg.patch, GADGETS, "default", "g", {"spec": {"size": 2}}, "merge")
    assert cause["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 2: size is immutable",
        "field": "spec.size",
    }


def test_unchanged_values_ratchet_and_status_stays_writable(reg):
    reg.create(CRD, None, gadget_crd())
    reg.create(GADGETS, "default", gadget(size=50))
    crd = reg.get(CRD, None, "gadgets.example.com")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.size < 10"}]
    reg.update(CRD, None, "gadgets.example.com", crd)
    with reg.field_validation(None) as warnings:
        done = reg.patch(GADGETS, "default", "g", {"status": {"phase": "Done"}}, "merge", "status")
    assert done["status"] == {"phase": "Done"}
    assert warnings == ["spec: Invalid value: failed rule: self.size < 10"]
    assert invalid(reg.patch, GADGETS, "default", "g", {"spec": {"size": 51}}, "merge")


def test_type_errors_block_the_rules(reg):
    reg.create(CRD, None, gadget_crd(spec_rules=[{"rule": "self.size > 0"}]))
    causes = invalid(reg.create, GADGETS, "default", gadget(size="big"))["details"]["causes"]
    assert causes[0]["reason"] == "FieldValueTypeInvalid"
    assert causes[-1]["field"] == "<nil>"
    assert "some validation rules were not checked" in causes[-1]["message"]


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("self.size >", "Syntax error"),
        ("self.size.nope()", "undeclared reference to 'nope'"),
        ("1 + 'a'", "found no matching overload for '_+_'"),
    ],
)
def test_crds_with_rules_that_do_not_compile_are_refused(reg, rule, why):
    status = invalid(reg.create, CRD, None, gadget_crd(spec_rules=[{"rule": rule}]))
    cause = status["details"]["causes"][0]
    assert cause["field"] == (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    assert "compilation failed: ERROR: <input>:1:" in cause["message"] and why in cause["message"]


def test_kubernetes_libraries():
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {
                "rule": "self.xs.isSorted() && self.xs.sum() == 6 && self.xs.max() == 3 && self.xs.indexOf(2) == 1"
            },
            {"rule": "self.s.find('[0-9]+') == '42' && self.s.findAll('[a-z]').size() == 2"},
            {"rule": "self.s.lowerAscii().upperAscii() == 'AB42' && self.s.split('4').size() == 2"},
        ],
    }
    assert celrules.validate({"xs": [1, 2, 3], "s": "ab42"}, None, schema).causes == []
    assert len(celrules.validate({"xs": [3, 2, 1], "s": "ab42"}, None, schema).causes) == 1


def test_old_self_detection_ignores_string_literals():
    assert celrules.uses_old_self("self == oldSelf")
    assert not celrules.uses_old_self("self.name != 'oldSelf'")
