import gc
import json

import pytest

from tf_operator.k8s.client import jsondecode


def chunked(data: bytes, size: int):
    parts = iter([data[i : i + size] for i in range(0, len(data), size)])
    return lambda: next(parts, b"")


DOCS = [
    {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "12", "continue": "tok"},
        "items": [
            {
                "a": 1,
                "b": "é ü 漢字",
                "n": 123456789,
                "f": -1.5e10,
                "t": True,
                "z": None,
                "l": [1, 2],
            }
        ]
        * 20,
    },
    {"items": [], "kind": "X"},
    {},
    {"metadata": {}, "items": [1, 22, -4.5e3, "s", [1, [2]], {"x": {}}, 7], "tail": 98765},
]


@pytest.mark.parametrize("doc", DOCS)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1 << 20])
def test_load_stream_matches_json_loads_at_any_chunking(doc, size):
    for text in (json.dumps(doc, ensure_ascii=False), json.dumps(doc, indent=2)):
        assert jsondecode.load_stream(chunked(text.encode(), size)) == doc


def test_load_stream_non_object_and_errors():
    assert jsondecode.load_stream(chunked(b"[1, 2]", 1)) == [1, 2]
    for bad in (b'{"items":[1,2', b'{"a":1 "b":2}', b'{"items":[1 2]}', b'{"a":'):
        with pytest.raises(ValueError):
            jsondecode.load_stream(chunked(bad, 3))


def test_large_bodies_share_equal_strings_and_restore_gc():
    items = [{"phase": "Running", "name": f"p{i}", "image": "img:" + "1" * 3} for i in range(20000)]
    body = json.dumps({"items": items}).encode()
    assert len(body) >= jsondecode.LARGE_BODY
    for decoded in (jsondecode.loads(body), jsondecode.load_stream(chunked(body, 4096))):
        first, second = decoded["items"][0], decoded["items"][1]
        assert first["phase"] is second["phase"] and first["image"] is second["image"]
        assert decoded == {"items": items}
    assert gc.isenabled()


def test_gc_stays_disabled_if_it_was():
    gc.disable()
    try:
        jsondecode.loads(json.dumps({"items": ["x" * 100] * 5000}).encode())
        assert not gc.isenabled()
    finally:
        gc.enable()
