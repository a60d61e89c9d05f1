"""When RestTransport waits out a Retry-After (the wire behaviour is an integration test)."""

import pytest

from tf_operator.k8s.client.rest import retry_after_seconds


@pytest.mark.parametrize(
    ("status", "header", "expected"),
    [
        (429, "3", 3),
        (500, "1", 1),
        (504, "0", 0),
        (409, "1", None),
        (429, None, None),
        (429, "soon", None),
        (503, "-1", None),
    ],
)
def test_retry_after_seconds(status: int, header: str | None, expected: int | None) -> None:
    headers = {} if header is None else {"Retry-After": header}
    assert retry_after_seconds(status, headers) == expected
