import pytest
from hypothesis import given
from hypothesis import strategies as st

from tf_operator.k8s.labels import (
    label_selector_as_selector,
    labels_to_string,
    parse_selector,
    selector_from_set,
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("a=b", "a=b"),
        ("a==b", "a==b"),
        ("c!=d, a=b", "a=b,c!=d"),
        ("x in (b,a)", "x in (a,b)"),
        ("x notin (z, y)", "x notin (y,z)"),
        ("!y", "!y"),
        ("z", "z"),
        ("n>3,m<5", "m<5,n>3"),
        ("a=", "a="),
        ("kubeflow.org/job-name=mnist", "kubeflow.org/job-name=mnist"),
    ],
)
def test_parse_canonical(text, canonical):
    assert str(parse_selector(text)) == canonical
    assert str(parse_selector(str(parse_selector(text)))) == canonical


@pytest.mark.parametrize(
    "bad",
    [
        "a in b",
        "a=b=c",
        "!",
        "a,,b",
        "a b",
        "a in ()",
        "a notin (x",
        "-bad=1",
        "a=b c",
        "a>x",
        "a in (x y)",
        "=b",
        "a=-x-",
    ],
)
def test_parse_errors(bad):
    with pytest.raises(ValueError, match="invalid"):
        parse_selector(bad)


@pytest.mark.parametrize(
    ("text", "labels", "want"),
    [
        ("", {}, True),
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a in (x,y)", {"a": "y"}, True),
        ("a in (x,y)", {}, False),
        ("a notin (x,y)", {}, True),
        ("a notin (x,y)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("a", {}, False),
        ("!a", {}, True),
        ("!a", {"a": "1"}, False),
        ("n>3", {"n": "4"}, True),
        ("n>3", {"n": "3"}, False),
        ("n<3", {"n": "x"}, False),
        ("a=b,c", {"a": "b"}, False),
        ("a=b,c", {"a": "b", "c": "1"}, True),
    ],
)
def test_matches(text, labels, want):
    assert parse_selector(text).matches(labels) is want


def test_from_set_and_empty():
    sel = selector_from_set({"job": "x", "app": "tf"})
    assert str(sel) == "app=tf,job=x"
    assert sel.matches({"app": "tf", "job": "x", "other": "1"})
    assert not sel.matches({"app": "tf"})
    assert selector_from_set({}).empty()
    assert parse_selector("").empty()
    assert not sel.empty()
    assert labels_to_string({"b": "1", "a": "2"}) == "a=2,b=1"


def test_label_selector_dict():
    sel = label_selector_as_selector(
        {
            "matchLabels": {"app": "tf"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["ps", "worker"]},
                {"key": "skip", "operator": "DoesNotExist"},
                {"key": "job", "operator": "Exists"},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
            ],
        }
    )
    assert str(sel) == "app=tf,env notin (dev),job,!skip,tier in (ps,worker)"
    assert sel.matches({"app": "tf", "tier": "ps", "job": "j"})
    assert not sel.matches({"app": "tf", "tier": "ps", "job": "j", "skip": "1"})
    assert label_selector_as_selector({}).empty()
    nothing = label_selector_as_selector(None)
    assert not nothing.matches({}) and not nothing.empty()
    with pytest.raises(ValueError, match="not a valid label selector operator"):
        label_selector_as_selector({"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
    with pytest.raises(ValueError):
        label_selector_as_selector({"matchExpressions": [{"key": "a", "operator": "In"}]})


def test_selector_equality_and_passthrough():
    a = parse_selector("b=1,a=2")
    assert a == parse_selector("a=2,b=1")
    assert parse_selector(a) is a
    assert hash(a) == hash(parse_selector("a=2, b=1"))


_LABEL = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)


@given(
    st.dictionaries(_LABEL, _LABEL, max_size=4),
    st.dictionaries(_LABEL, _LABEL, max_size=6),
)
def test_a_set_selector_matches_exactly_the_label_sets_that_hold_every_pair(wanted, labels):
    """What ``selector_from_set`` builds matches by one comparison of pairs; the same answer
    as its requirements one by one."""
    selector = selector_from_set(wanted)
    assert selector.matches(labels) == all(labels.get(k) == v for k, v in wanted.items())
    assert selector.matches(labels) == all(r.matches(labels) for r in selector.requirements)
    assert selector_from_set(dict(wanted)) is selector or not wanted  # one per label set
