"""Label and field selector parsing and matching."""

from __future__ import annotations

import pytest

from localcluster.apimachinery.selectors import parse_field_selector, parse_label_selector
from localcluster.controlplane.emulated import StatusError


def obj(labels=None, **fields):
    return {"metadata": {"name": "n", "namespace": "ns", "labels": labels or {}}, **fields}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=1", {"a": "1"}, True),
        ("a==1", {"a": "2"}, False),
        ("a!=1", {}, True),
        ("a in (1, 2)", {"a": "2"}, True),
        ("a notin (1,2)", {}, True),
        ("a notin (1,2)", {"a": "1"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": "x"}, False),
        ("a=1,b in (x),!c", {"a": "1", "b": "x"}, True),
        ("a=", {"a": ""}, True),
        ("example.com/key=v", {"example.com/key": "v"}, True),
    ],
)
def test_label_selectors(selector, labels, expected):
    assert parse_label_selector(selector)(obj(labels)) is expected


def test_empty_selectors_select_everything():
    assert parse_label_selector("") is None and parse_field_selector(None) is None


@pytest.mark.parametrize("bad", ["a in (b", "a b", "=x", "a=b=c d"])
def test_bad_label_selectors(bad):
    with pytest.raises(StatusError) as e:
        parse_label_selector(bad)
    assert e.value.code == 400


def test_field_selectors():
    pod = obj(spec={"nodeName": "n1", "unschedulable": True}, status={"phase": "Running"})
    assert parse_field_selector("metadata.name=n,metadata.namespace=ns")(pod)
    assert parse_field_selector("status.phase!=Pending,spec.nodeName==n1")(pod)
    assert parse_field_selector("spec.unschedulable=true")(pod)
    assert parse_field_selector("spec.schedulerName=")(pod)  # missing compares as ""
    event = {"involvedObject": {"name": "web", "uid": "u"}, "source": {"component": "kubelet"}}
    assert parse_field_selector("involvedObject.name=web,involvedObject.uid=u,source=kubelet")(
        event
    )
    with pytest.raises(StatusError):
        parse_field_selector("nonsense")
