"""TF_CONFIG encoding details (Go-compatible JSON)."""

from tf_operator.controller.v1.tensorflow.tensorflow import go_json


def test_go_json_is_compact_ordered_and_escaped():
    value = {"b": [1, "<&>"], "a": {"x": "é\u2028"}}
    assert go_json(value) == '{"b":[1,"\\u003c\\u0026\\u003e"],"a":{"x":"é\\u2028"}}'
