"""Names, keys, index slicing and limit arithmetic of the job controller."""

import logging
import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest

from tf_operator.common.jobcontroller.limits import (
    container_restarts,
    past_active_deadline,
    past_backoff_limit,
    seconds_left,
)
from tf_operator.common.jobcontroller.owned import group_by_index
from tf_operator.common.jobcontroller.util import gen_expectation_key, gen_general_name

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_names_and_keys():
    assert gen_general_name("a/b", "worker", 0) == "a-b-worker-0"
    assert gen_expectation_key("ns/j", "Worker", "pods") == "ns/j/worker/pods"
    assert gen_expectation_key("ns/j", "PS", "services") == "ns/j/ps/services"


def _obj(index):
    labels = {} if index is None else {"idx": index}
    return {"metadata": {"name": str(index), "labels": labels}}


def test_slicing_sets_apart_out_of_range_and_invalid_indices():
    objs = [_obj("0"), _obj("1"), _obj("1"), _obj("x"), _obj(None), _obj("5"), _obj("-1")]
    objs.append(_obj(" 2"))
    slices, out_of_range, invalid = group_by_index(objs, 3, "idx", "pod", logging.getLogger("t"))
    assert {i: len(s) for i, s in slices.items()} == {0: 1, 1: 2}
    assert [o["metadata"]["name"] for o in out_of_range] == ["5"]
    # not as we write an index (v0.5.3 skipped these, or parsed "-1" and " 2"): D67
    assert [o["metadata"]["name"] for o in invalid] == ["x", "None", "-1", " 2"]


def test_slicing_is_sized_by_the_objects_not_the_replica_count():
    # v0.5.3 allocated one list per declared replica (issue 13, finding 1).
    tracemalloc.start()
    try:
        slices, _, _ = group_by_index([_obj("3")], 10**6, "idx", "pod", logging.getLogger("t"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert list(slices) == [3]
    assert peak < 100_000


@pytest.mark.parametrize(
    "limit, failures, past",
    [(None, 9, False), (0, 0, False), (0, 1, True), (3, 2, False), (3, 3, True)],
)
def test_past_backoff_limit(limit, failures, past):
    assert past_backoff_limit(limit, failures) is past


def test_restarts_and_deadlines():
    pod = {
        "status": {
            "initContainerStatuses": [{"restartCount": 1}],
            "containerStatuses": [{"restartCount": 2}, {}],
        }
    }
    assert container_restarts(pod) == 3
    assert not past_active_deadline(None, T0, T0 + timedelta(days=1))
    assert not past_active_deadline(10, None, T0)
    assert not past_active_deadline(10, T0, T0 + timedelta(seconds=9))
    assert past_active_deadline(10, T0, T0 + timedelta(seconds=10))
    assert seconds_left(100, T0, T0 + timedelta(seconds=40)) == 60
