"""Bodies built to hurt a server get what kube-apiserver gives them (issue 27's leftovers):
objects nested up to its 10,000 levels are stored, served, patched and watched (custom
resources with CEL rules too) and deeper ones refused with its message; a YAML alias bomb is a
400 at once; a malformed protobuf body is a Status 400 (fuzzed), never a 500."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localcluster.apimachinery import deepjson
from localcluster.apimachinery.objects import nesting_depth
from localcluster.controlplane.emulated import APIServer
from localcluster.controlplane.emulated.serving.protobuf import CONTENT_TYPE as PROTOBUF
from localcluster.controlplane.emulated.serving.protobuf import MAGIC
from support.crd import install_crds
from support.fuzz import FUZZ
from support.protobuf_wire import envelope, field
from support.yaml_alias_vectors import LAUGHS

pytestmark = pytest.mark.integration

CMS = "/api/v1/namespaces/default/configmaps"
TFJOBS = "/apis/kubeflow.org/v1/namespaces/default/tfjobs"
JSON = "application/json"


@pytest.fixture(scope="module")
def server():
    s = APIServer(port=0)
    s.start()
    install_crds(s.registry)
    yield s
    s.stop()


def call(
    server: APIServer, method: str, path: str, body: bytes | None = None, ctype: str = JSON
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": ctype})
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, read(payload) if payload else None
    finally:
        conn.close()


def read(payload: bytes) -> Any:
    """A reply: lists and watch events wrap objects in a level or two more than they hold."""
    return deepjson.loads(payload, max_depth=deepjson.MAX_DEPTH + 2)


def chain(levels: int, leaf: str = "1") -> str:
    """``levels`` objects nested in each other, ``leaf`` at the bottom."""
    return '{"a":' * levels + leaf + "}" * levels


def configmap(name: str, levels: int) -> bytes:
    """A ConfigMap nested ``levels`` deep in all (the body itself is the first level)."""
    return f'{{"metadata":{{"name":"{name}"}},"x":{chain(levels - 1)}}}'.encode()


# apiVersion/spec/tfReplicaSpecs/Worker/template/spec/containers/[0] holds the chain: 8 levels
TFJOB_WRAPPING = 8


def tfjob(name: str, levels: int, leaf: str = "1") -> bytes:
    """A TFJob whose container carries a field (kept: the template preserves unknown fields)
    that makes the body ``levels`` deep."""
    container = (
        f'{{"name":"tensorflow","image":"tf","deep":{chain(levels - TFJOB_WRAPPING, leaf)}}}'
    )
    spec = {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": []}}}}}
    head = json.dumps(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": name},
            "spec": spec,
        },
        separators=(",", ":"),
    )
    return head.replace('"containers":[]', f'"containers":[{container}]').encode()


class Watcher:
    """The events of one watch, read on a thread of their own."""

    def __init__(self, server: APIServer, path: str) -> None:
        self.events: list[dict[str, Any]] = []
        self._conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        self._conn.request("GET", f"{path}?watch=true&timeoutSeconds=60")
        self._resp = self._conn.getresponse()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while line := self._resp.readline():
            self.events.append(read(line))

    def wait_for(self, count: int, deadline: float = 30) -> list[dict[str, Any]]:
        end = time.monotonic() + deadline
        while len(self.events) < count and time.monotonic() < end:
            time.sleep(0.05)
        assert len(self.events) >= count, self.events
        return self.events

    def close(self) -> None:
        self._conn.close()


def test_configmap_bodies_as_deep_as_kube_apiserver_reads_are_read(server):
    """A ConfigMap has no field that nests (its data are strings): kube-apiserver reads a body
    10,000 levels deep and drops the unknown field that nests it, with a warning, on create,
    patch and update alike (deep values that are kept: the TFJob tests below)."""
    watch = Watcher(server, CMS)
    code, created = call(server, "POST", CMS, configmap("deep", 10_000))
    assert code == 201, created
    assert "x" not in created and nesting_depth(created) == 2  # the object and its metadata
    for leaf, ctype in (
        ("1", "application/merge-patch+json"),
        ("2", "application/strategic-merge-patch+json"),
    ):
        patch = f'{{"y":{chain(9_998, leaf)}}}'.encode()
        code, patched = call(server, "PATCH", f"{CMS}/deep", patch, ctype)
        assert code == 200 and "y" not in patched
    code, _ = call(server, "PUT", f"{CMS}/deep", configmap("deep", 10_000))
    assert code == 200
    assert call(server, "DELETE", f"{CMS}/deep")[0] == 200
    kinds = [e["type"] for e in watch.wait_for(2)]
    assert kinds[:2] == ["ADDED", "DELETED"] and "x" not in watch.events[0]["object"]
    watch.close()


def test_custom_resources_as_deep_with_cel_rules_and_server_side_apply(server):
    """The TFJob CRD's rules see the whole object: cel-cpp converts it recursively in native
    code, which overflowed the thread's stack (a crash) past about 5,000 levels."""
    watch = Watcher(server, TFJOBS)
    code, created = call(server, "POST", TFJOBS, tfjob("deep", 10_000))
    assert code == 201, created
    assert nesting_depth(created) == 10_000
    code, updated = call(server, "PUT", f"{TFJOBS}/deep", deepjson.dumps(created))
    assert code == 200
    code, applied = call(
        server,
        "PATCH",
        f"{TFJOBS}/applied?fieldManager=test",
        tfjob("applied", 10_000),
        "application/apply-patch+yaml",
    )
    assert code == 201 and nesting_depth(applied) == 10_000
    code, reapplied = call(
        server,
        "PATCH",
        f"{TFJOBS}/applied?fieldManager=test",
        tfjob("applied", 10_000, '"changed"'),
        "application/apply-patch+yaml",
    )
    assert code == 200 and '"changed"' in deepjson.dumps(reapplied).decode()
    code, listed = call(server, "GET", TFJOBS)
    assert code == 200 and len(listed["items"]) == 2
    assert watch.wait_for(3)[0]["type"] == "ADDED"
    watch.close()
    for name in ("deep", "applied"):
        assert call(server, "DELETE", f"{TFJOBS}/{name}")[0] == 200


def test_a_deeper_body_is_refused_as_kube_apiserver_refuses_it(server):
    code, status = call(server, "POST", CMS, configmap("deeper", 10_001))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '{' exceeded max depth "
        '({"metadata":{"name":"deeper"}, ...)'
    )
    code, status = call(server, "POST", TFJOBS, tfjob("deeper", 10_001))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "(must be of type TFJob)" in status["message"]


def test_a_json_patch_nesting_the_object_too_deep_is_the_422_kube_apiserver_gives(server):
    assert call(server, "POST", TFJOBS, tfjob("grows", 5_000))[0] == 201
    # the container's "deep" value sits 9 levels down; 4,983 more reach an object 4,992 deep
    path = "/spec/tfReplicaSpecs/Worker/template/spec/containers/0/deep" + "/a" * 4_983 + "/b"
    ops = f'[{{"op":"add","path":"{path}","value":{chain(5_100)}}}]'.encode()
    code, status = call(server, "PATCH", f"{TFJOBS}/grows", ops, "application/json-patch+json")
    assert (code, status["reason"]) == (422, "Invalid")
    code, kept = call(server, "GET", f"{TFJOBS}/grows")
    assert code == 200 and nesting_depth(kept) == 5_000
    assert call(server, "DELETE", f"{TFJOBS}/grows")[0] == 200


def test_a_yaml_alias_bomb_is_a_400_at_once(server):
    """A 603-byte document standing for 10^9 values: go-yaml refuses it as it decodes."""
    body = ("metadata:\n  name: bomb\ndata:\n  " + LAUGHS.replace("\n", "\n  ")).encode()
    started = time.monotonic()
    code, status = call(server, "POST", CMS, body, "application/yaml")
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): yaml: document "
        f"contains excessive aliasing ({body[:30].hex()} ...)"
    )
    code, status = call(
        server, "PATCH", f"{CMS}/bomb?fieldManager=x", body, "application/apply-patch+yaml"
    )
    assert (code, status["message"]) == (
        400,
        "error decoding YAML: error converting YAML to JSON: yaml: document contains "
        "excessive aliasing",
    )
    assert time.monotonic() - started < 5
    assert call(server, "GET", f"{CMS}/bomb")[0] == 404


NS = "namespaces/default"
META = field(1, "fuzz") + field(11, field(1, "app") + field(2, "x"))
POD_TEMPLATE = field(1, field(11, field(1, "app") + field(2, "x"))) + field(
    2, field(2, field(1, "c") + field(2, "busybox") + field(3, "sleep") + field(6, field(3, 80)))
)
SELECTOR = field(1, field(1, "app") + field(2, "x"))
# what kubectl sends, one kind a shape: maps, bytes, integers, IntOrStrings, nested messages
PROTOBUF_SEEDS = [
    (
        f"/api/v1/{NS}/configmaps",
        envelope("v1", "ConfigMap", field(1, META) + field(2, field(1, "k") + field(2, "v"))),
    ),
    (
        f"/api/v1/{NS}/secrets",
        envelope("v1", "Secret", field(1, META) + field(2, field(1, "k") + field(2, b"\x00\xff"))),
    ),
    (
        f"/api/v1/{NS}/services",
        envelope(
            "v1",
            "Service",
            field(1, META)
            + field(2, field(1, field(3, 80) + field(4, field(1, 0) + field(2, 8080)))),
        ),
    ),
    (
        f"/apis/apps/v1/{NS}/deployments",
        envelope(
            "apps/v1",
            "Deployment",
            field(1, META) + field(2, field(1, 1) + field(2, SELECTOR) + field(3, POD_TEMPLATE)),
        ),
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/{NS}/rolebindings",
        envelope(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            field(1, META)
            + field(2, field(1, "User") + field(3, "bob"))
            + field(3, field(1, "rbac.authorization.k8s.io") + field(2, "Role") + field(3, "r")),
        ),
    ),
]
edits = st.lists(
    st.tuples(
        st.sampled_from(["cut", "set", "insert", "delete"]),
        st.integers(0, 400),
        st.binary(min_size=1, max_size=6),
    ),
    max_size=3,
)
# messages of any shape: small field numbers (the ones the tables know), any wire value
Fields = list[tuple[int, Any]]
messages: st.SearchStrategy[Fields] = st.recursive(
    st.lists(
        st.tuples(st.integers(1, 12), st.integers(0, 2**64 - 1) | st.binary(max_size=8)),
        max_size=4,
    ),
    lambda inner: st.lists(
        st.tuples(st.integers(1, 12), st.integers(0, 2**64 - 1) | st.binary(max_size=8) | inner),
        max_size=4,
    ),
    max_leaves=12,
)


def encoded(fields: Fields) -> bytes:
    return b"".join(field(n, encoded(v) if isinstance(v, list) else v) for n, v in fields)


def mutated(body: bytes, changes: list[tuple[str, int, bytes]]) -> bytes:
    """``body`` truncated, overwritten, grown or shortened at each change's offset (past the
    magic, which a protobuf body is recognised by)."""
    data = bytearray(body)
    for change, at, noise in changes:
        at = len(MAGIC) + at % max(1, len(data) - len(MAGIC) + 1)
        if change == "cut":
            del data[at:]
        elif change == "set":
            data[at : at + len(noise)] = noise
        elif change == "insert":
            data[at:at] = noise
        else:
            del data[at : at + len(noise)]
    return bytes(data)


@st.composite
def protobuf_posts(draw: st.DrawFn) -> tuple[str, bytes]:
    """A path and a body: what kubectl sends there, or a message of any shape in the same
    envelope, either maybe mutated byte by byte; or bytes of any kind after the magic."""
    path, body = draw(st.sampled_from(PROTOBUF_SEEDS))
    source = draw(st.sampled_from(["kubectl's", "any shape", "garbage"]))
    if source == "garbage":
        return path, MAGIC + draw(st.binary(max_size=64))
    if source == "any shape":
        type_meta = body[len(MAGIC) + 2 : len(MAGIC) + 2 + body[len(MAGIC) + 1]]
        body = MAGIC + field(1, type_meta) + field(2, encoded(draw(messages)))
    return path, mutated(body, draw(edits))


@FUZZ
@given(post=protobuf_posts())
def test_any_protobuf_body_gets_a_status_and_the_server_keeps_serving(server, post):
    """kube-apiserver answers a body it cannot decode with a 400, a kind it cannot take with a
    415 (ours: a kind without a table), an object it refuses with a 422 or a 409; created
    objects are the only other answer."""
    path, body = post
    code, reply = call(server, "POST", path, body, PROTOBUF)
    assert code in (201, 400, 409, 415, 422), (code, reply)
    if code == 201:
        # RBAC names take any character but '/' and '%' (kube-apiserver's path segment rule)
        name = urllib.parse.quote(reply["metadata"]["name"], safe="")
        assert call(server, "DELETE", f"{path}/{name}")[0] == 200
    else:
        assert (reply["kind"], reply["code"]) == ("Status", code), reply
    assert call(server, "GET", CMS)[0] == 200
