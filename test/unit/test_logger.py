import io
import json
import logging
import threading
import time

import pytest

from tf_operator import logger


@pytest.fixture
def captured():
    stream = io.StringIO()
    logger.configure_logging(json_format=True)
    handler = logging.getLogger().handlers[0]
    handler.setStream(stream)
    yield stream
    logging.getLogger().handlers.clear()


def _flush() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


def _last_json(stream: io.StringIO) -> dict:
    _flush()
    return json.loads(stream.getvalue().strip().splitlines()[-1])


def test_job_logger_emits_logrus_keys_and_the_kind(captured):
    job = {"metadata": {"namespace": "ns", "name": "mnist", "uid": "u-1"}}
    logger.logger_for_job(job, "TFJob").info("reconciling %s", "now")
    line = _last_json(captured)
    assert line["msg"] == "reconciling now"
    assert line["level"] == "info"
    assert line["job"] == "ns.mnist"
    assert line["uid"] == "u-1"
    assert line["kind"] == "TFJob"  # D83
    assert line["filename"].endswith("test_logger.py:" + line["filename"].rsplit(":", 1)[1])
    assert "levelname" not in line and "fields" not in line
    assert set(line) == {"level", "msg", "time", "filename", "job", "uid", "kind"}


def test_pod_logger_names_owner_only_for_matching_kind(captured):
    pod = {
        "metadata": {
            "namespace": "ns",
            "name": "mnist-worker-0",
            "uid": "p-1",
            "ownerReferences": [{"controller": True, "kind": "TFJob", "name": "mnist"}],
        }
    }
    logger.logger_for_pod(pod, "TFJob").warning("x")
    line = _last_json(captured)
    assert (line["job"], line["kind"]) == ("ns.mnist", "TFJob")
    logger.logger_for_pod(pod, "PyTorchJob").warning("y")
    line = _last_json(captured)
    assert line["job"] == "" and line["pod"] == "ns.mnist-worker-0" and line["uid"] == "p-1"
    assert "kind" not in line  # not a line about a PyTorchJob


def test_replica_and_key_loggers(captured):
    job = {"metadata": {"namespace": "a", "name": "b", "uid": "u"}}
    logger.logger_for_replica(job, "worker", "PyTorchJob").error("boom")
    line = _last_json(captured)
    assert (line["replica-type"], line["job"], line["uid"]) == ("worker", "a.b", "u")
    assert line["kind"] == "PyTorchJob"
    logger.logger_for_key("a/b", "TFJob").info("k")
    line = _last_json(captured)
    assert (line["job"], line["kind"]) == ("a.b", "TFJob")
    logger.logger_for_kind("PyTorchJob").info("starting")
    line = _last_json(captured)
    assert line["kind"] == "PyTorchJob" and "job" not in line
    assert logger.logger_for_kind("PyTorchJob") is logger.logger_for_kind("PyTorchJob")


def test_unstructured_logger_names_the_job_only_of_its_kind(captured):
    job = {"kind": "PyTorchJob", "metadata": {"namespace": "a", "name": "b", "uid": "u"}}
    logger.logger_for_unstructured(job, "PyTorchJob").info("x")
    line = _last_json(captured)
    assert (line["job"], line["uid"], line["kind"]) == ("a.b", "u", "PyTorchJob")
    logger.logger_for_unstructured(job, "TFJob").info("y")
    line = _last_json(captured)
    assert line["job"] == "" and "kind" not in line


def test_a_record_with_extras_writes_them_as_fields(captured):
    logging.getLogger("tf_operator.x").warning("event", extra={"kind": "TFJob"})
    assert _last_json(captured)["kind"] == "TFJob"


def test_text_format():
    stream = io.StringIO()
    logger.configure_logging(json_format=False)
    logging.getLogger().handlers[0].setStream(stream)
    logger.logger_for_key("ns/j", "TFJob").info("hello")
    logging.getLogger("tf_operator.x").warning("event", extra={"kind": "PyTorchJob"})
    _flush()
    logging.getLogger().handlers.clear()
    out = stream.getvalue()
    assert 'level=info msg="hello" job=ns.j kind=TFJob filename=' in out
    assert 'level=warning msg="event" kind=PyTorchJob filename=' in out


def test_info_lines_are_written_together_a_warning_at_once():
    stream = io.StringIO()
    handler = logger.BatchingStreamHandler(stream, delay=3600)  # the writer never wakes
    log = logging.getLogger("tf_operator.test_batching")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.info("one")
        log.info("two")
        assert stream.getvalue() == ""
        log.warning("three")
        assert stream.getvalue() == "one\ntwo\nthree\n"
        log.info("four")
        handler.flush()
        assert stream.getvalue().endswith("three\nfour\n")
    finally:
        log.removeHandler(handler)
        log.propagate = True


def test_the_writer_thread_writes_info_lines_after_the_delay():
    stream = io.StringIO()
    handler = logger.BatchingStreamHandler(stream, delay=0.01)
    log = logging.getLogger("tf_operator.test_writer")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.info("soon")
        written = threading.Event()
        deadline = time.monotonic() + 10
        while not written.wait(0.01) and time.monotonic() < deadline:
            if stream.getvalue():
                written.set()
        assert stream.getvalue() == "soon\n"
    finally:
        log.removeHandler(handler)
        log.propagate = True
