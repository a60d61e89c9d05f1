"""Paginated LIST as kube-apiserver serves it: etcd key order, every page read at the first
page's resourceVersion, etcd's continue tokens (and their 410 once compacted), lists at an
exact resourceVersion, and pages that cost what they return."""

from __future__ import annotations

import base64
import json

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.serving import params
from localcluster.controlplane.emulated.serving.httpcore import Request
from localcluster.controlplane.emulated.storage import paging

CM = ("", "v1", "configmaps")
NS = ("", "v1", "namespaces")


@pytest.fixture
def reg():
    r = Registry(watch_history=200)
    yield r
    r.stop()


def make(reg, name: str, namespace: str = "default", **labels: str) -> dict:
    return reg.create(CM, namespace, {"metadata": {"name": name, "labels": labels}})


def names(items: list[dict]) -> list[str]:
    return [i["metadata"]["name"] for i in items]


def every_page(reg, namespace, limit, **kw) -> tuple[list[list[str]], set[str]]:
    """The names on each page of a full paginated list, and the list RVs the pages reported."""
    pages, rvs, token = [], set(), None
    while True:
        items, rv, token, _ = reg.list_page(CM, namespace, limit=limit, continue_token=token, **kw)
        pages.append(names(items))
        rvs.add(rv)
        if token is None:
            return pages, rvs


def decoded(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def test_pages_follow_etcd_key_order_across_namespaces(reg):
    for ns in ("team-1", "team"):
        reg.create(NS, None, {"metadata": {"name": ns}})
        make(reg, "b", ns)
        make(reg, "a", ns)
    items, list_rv, token, remaining = reg.list_page(CM, None, limit=3)
    # "team-1/a" < "team/a": '-' sorts before '/' in an etcd key
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        ("team-1", "a"),
        ("team-1", "b"),
        ("team", "a"),
    ]
    assert remaining == 1
    assert decoded(token) == {"v": "meta.k8s.io/v1", "rv": int(list_rv), "start": "team/a\x00"}
    items, _, token, _ = reg.list_page(CM, "team", limit=1)
    assert names(items) == ["a"] and decoded(token)["start"] == "a\x00"


def test_every_page_reads_the_first_pages_resource_version(reg):
    for name in ("a", "b", "c", "d", "e"):
        make(reg, name)
    first, list_rv, token, _ = reg.list_page(CM, "default", limit=2)
    before = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in reg.list(CM)[0]}
    make(reg, "bb")  # lands after the first page: not in this list
    reg.delete(CM, "default", "d")  # deleted after the first page: still in this list
    reg.patch(CM, "default", "c", {"metadata": {"labels": {"x": "y"}}}, "merge")
    rest, rv, token, remaining = reg.list_page(CM, "default", limit=2, continue_token=token)
    assert names(rest) == ["c", "d"] and rv == list_rv and remaining == 1
    assert rest[0]["metadata"]["resourceVersion"] == before["c"]  # c as it was then
    assert decoded(token)["rv"] == int(list_rv)
    last, rv, token, _ = reg.list_page(CM, "default", limit=2, continue_token=token)
    assert names(last) == ["e"] and rv == list_rv and token is None
    assert names(reg.list(CM, "default")[0]) == ["a", "b", "bb", "c", "e"]


def test_a_forgotten_snapshot_is_rebuilt_from_history(reg):
    for i in range(4):
        make(reg, f"c{i}")
    _, list_rv, token, _ = reg.list_page(CM, "default", limit=2)
    reg.delete(CM, "default", "c3")
    make(reg, "c25")
    reg.store.forget_snapshots()  # as if later lists had pushed it out
    items, rv, _, _ = reg.list_page(CM, "default", limit=5, continue_token=token)
    assert names(items) == ["c2", "c3"] and rv == list_rv


def test_selectors_page_over_keys_and_do_not_count_what_remains(reg):
    for i in range(6):
        make(reg, f"c{i}", app="web" if i in (0, 2, 3) else "db")
    pages, _ = every_page(reg, "default", 2, label_selector="app=web")
    assert pages == [["c0", "c2"], ["c3"]]
    items, _, token, remaining = reg.list_page(CM, "default", "app=web", limit=2)
    assert names(items) == ["c0", "c2"] and token and remaining is None
    items, _, token, _ = reg.list_page(CM, "default", "app=web", limit=1, continue_token=token)
    assert names(items) == ["c3"] and token is not None  # c4 and c5 follow, unmatched
    items, _, token, _ = reg.list_page(CM, "default", "app=web", limit=1, continue_token=token)
    assert items == [] and token is None


def test_an_expired_continue_token_gets_410_and_a_token_for_the_rest(reg):
    for i in range(4):
        make(reg, f"c{i}")
    _, _, token, _ = reg.list_page(CM, "default", limit=2)
    reg.delete(CM, "default", "c3")
    reg.compact()
    with pytest.raises(StatusError) as info:
        reg.list_page(CM, "default", limit=2, continue_token=token)
    err = info.value
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message.startswith("The provided continue parameter is too old")
    inconsistent = err.status["metadata"]["continue"]
    assert decoded(inconsistent) == {"v": "meta.k8s.io/v1", "rv": -1, "start": "c1\x00"}
    items, rv, token, _ = reg.list_page(CM, "default", limit=2, continue_token=inconsistent)
    assert names(items) == ["c2"] and rv == str(reg.resource_version) and token is None


def test_a_list_at_an_exact_resource_version(reg):
    make(reg, "a")
    b = make(reg, "b")
    at = int(b["metadata"]["resourceVersion"])
    reg.delete(CM, "default", "a")
    make(reg, "c")
    items, rv, _, _ = reg.list_page(CM, "default", limit=10, resource_version=at)
    assert names(items) == ["a", "b"] and rv == str(at)
    items, rv, _, _ = reg.list_page(CM, "default", resource_version=at - 1)
    assert names(items) == ["a"]
    reg.compact()
    with pytest.raises(StatusError) as info:
        reg.list_page(CM, "default", limit=10, resource_version=at)
    assert (info.value.code, info.value.message) == (
        410,
        "The resourceVersion for the provided list is too old.",
    )


@pytest.mark.parametrize(
    ("query", "reading"),
    [
        ({"limit": "2"}, (2, None, None)),
        ({"limit": "0"}, (None, None, None)),
        ({"limit": "2", "resourceVersion": "0"}, (None, None, None)),
        ({"limit": "2", "resourceVersion": "7"}, (2, None, 7)),  # legacy: exact
        ({"resourceVersion": "7"}, (None, None, None)),  # not older than: the latest
        (
            {"limit": "2", "resourceVersion": "7", "resourceVersionMatch": "NotOlderThan"},
            (2, None, None),
        ),
        ({"resourceVersion": "7", "resourceVersionMatch": "Exact"}, (None, None, 7)),
        # resourceVersion=0 is served whole from the watch cache, from the token's start on
        # (kube-apiserver 1.37 answers the rest of the list, no continue)
        ({"limit": "2", "continue": "t", "resourceVersion": "0"}, (None, "t", None)),
    ],
)
def test_how_list_options_are_read(query, reading):
    assert params.list_reading(Request("GET", "/api/v1/configmaps", query, {})) == reading


def test_continue_with_a_resource_version_is_refused():
    req = Request("GET", "/x", {"limit": "1", "continue": "t", "resourceVersion": "9"}, {})
    with pytest.raises(StatusError) as info:
        params.list_reading(req)
    assert info.value.message == "specifying resource version is not allowed when using continue"


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("%%%", "illegal base64 data at input byte 0"),
        (paging.encode_continue(0, "a\x00"), "incorrect encoded start resourceVersion"),
        (paging.encode_continue(5, ""), "encoded start key empty"),
        (
            paging.encode_continue(5, "../kube-system/x"),
            "continue key is not valid: ../kube-system/x",
        ),
        (
            base64.urlsafe_b64encode(b'{"v":"x","rv":1,"start":"a"}').decode().rstrip("="),
            "encoded version x",
        ),
    ],
)
def test_malformed_tokens_are_bad_requests(reg, token, why):
    with pytest.raises(StatusError) as info:
        reg.list_page(CM, "default", limit=1, continue_token=token)
    assert info.value.code == 400 and why in info.value.message
    assert info.value.message.startswith("invalid continue token: ")


def test_a_page_reads_only_its_own_keys():
    keys = sorted(paging.sort_key(("default", f"o{i:05d}")) for i in range(10000))
    objects = {paging.store_key(k): {"metadata": {"name": k}} for k in keys}
    snap = paging.Snapshot(7, keys, objects)
    looked: list[dict] = []

    def predicate(obj: dict) -> bool:
        looked.append(obj)
        return True

    page = paging.read_page(snap, "default", predicate, 10, "default/o05000\x00")
    assert len(page.items) == 10 and len(looked) == 10
    assert page.items[0]["metadata"]["name"] == "default/o05001"
