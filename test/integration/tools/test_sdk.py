"""TFJobClient against the local cluster and the real operator."""

from __future__ import annotations

import threading

import pytest
import yaml

from localcluster.testing import wait_for
from test.integration.tools.conftest import python_job, unique
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.sdk import (
    AlreadyExists,
    Conflict,
    Invalid,
    NotFound,
    WaitTimeout,
    is_suspended,
    job_state,
    suspend_requested,
)

pytestmark = pytest.mark.integration


def test_create_wait_pods_and_logs(client, operator):
    name = unique("sdk-ok")
    code = "import json,os; t=json.loads(os.environ['TF_CONFIG'])['task']; print('hello', t['type'], t['index'])"
    created = client.create(python_job(name, code, workers=2, clean_pod_policy="None"))
    assert created["metadata"]["namespace"] == "default"
    seen: list[str] = []
    final = client.wait_for_job(name, timeout=60, callback=lambda j: seen.append(job_state(j)))
    assert client.is_succeeded(name) and not client.is_failed(name)
    assert job_state(final) == "Succeeded"
    assert seen[-1] == "Succeeded" and len(seen) >= 2  # the first read, then changes
    assert client.get_pod_names(name) == [f"{name}-worker-0", f"{name}-worker-1"]
    assert client.get_pod_names(name, replica_type="Worker", index=1) == [f"{name}-worker-1"]
    # worker 0 alone decides success: follow until worker 1 has exited too, then read again
    expected = [(f"{name}-worker-0", "hello worker 0"), (f"{name}-worker-1", "hello worker 1")]
    assert sorted(client.get_logs(name, follow=True)) == expected
    assert list(client.get_logs(name)) == expected  # pod by pod, in replica order
    types = [c["type"] for c in client.get_conditions(name)]
    assert types[0] == "Created" and "Succeeded" in types
    assert any(e["reason"] == "SuccessfulCreatePod" for e in client.get_events(name))


def test_follow_streams_lines_while_the_container_runs(client, operator, tmp_path):
    """The container blocks until the test has read its first line through the stream: only a
    streaming follow can see it (a buffered read would wait for the exit and time out)."""
    name = unique("sdk-follow")
    marker = tmp_path / "go"
    code = (
        "import os,time\n"
        "print('ready', flush=True)\n"
        f"while not os.path.exists({str(marker)!r}): time.sleep(0.05)\n"
        "print('done')\n"
    )
    client.create(python_job(name, code, workers=2))
    got: list[tuple[str, str]] = []
    for pod, line in client.get_logs(name, follow=True, start_timeout=60):
        got.append((pod, line))
        if sum(1 for _, seen in got if seen == "ready") == 2:
            marker.touch()
    assert sorted(got) == sorted(
        [(f"{name}-worker-{i}", text) for i in (0, 1) for text in ("ready", "done")]
    )
    assert job_state(client.wait_for_job(name, timeout=30)) == "Succeeded"


def test_failed_job_and_timeout(client, operator):
    failing = unique("sdk-fail")
    client.create(python_job(failing, "raise SystemExit(3)", restart_policy="Never"))
    final = client.wait_for_job(failing, timeout=60)
    assert client.is_failed(failing) and job_state(final) == "Failed"

    slow = unique("sdk-slow")
    client.create(python_job(slow, "import time; time.sleep(60)"))
    with pytest.raises(WaitTimeout) as info:
        client.wait_for_job(slow, timeout=1.5)
    assert info.value.job is not None and info.value.job["metadata"]["name"] == slow
    client.delete(slow)


def test_wait_ends_when_the_job_is_deleted(client, operator):
    name = unique("sdk-gone")
    client.create(python_job(name, "import time; time.sleep(60)"))
    client.wait_for_job(name, conditions=["Running"], timeout=60)
    assert client.is_running(name)
    deleter = threading.Timer(0.3, client.delete, args=(name,), kwargs={})
    deleter.start()
    try:
        with pytest.raises(NotFound):
            client.wait_for_job(name, timeout=30)
    finally:
        deleter.join()


def test_typed_errors(client, cluster):
    with pytest.raises(NotFound) as missing:
        client.get("no-such-job")
    assert missing.value.status == 404 and "no-such-job" in str(missing.value)
    with pytest.raises(NotFound):
        client.wait_for_job("no-such-job", timeout=5)

    name = unique("sdk-err")
    job = python_job(name, "pass")
    client.create(job)
    with pytest.raises(AlreadyExists) as exists:
        client.create(job)
    assert isinstance(exists.value, Conflict) and exists.value.status == 409

    stale_version = client.get(name)["metadata"]["resourceVersion"]
    client.patch(name, {"metadata": {"labels": {"touched": "yes"}}})
    with pytest.raises(Conflict) as conflict:  # a patch naming an old resourceVersion
        client.patch(name, {"metadata": {"resourceVersion": stale_version, "labels": {"x": "y"}}})
    assert conflict.value.status == 409 and not isinstance(conflict.value, AlreadyExists)

    bad = python_job(unique("sdk-bad"), "pass")
    bad["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"
    with pytest.raises(Invalid) as invalid:
        client.create(bad)
    assert invalid.value.status == 422
    fields = [c.field for c in invalid.value.causes]
    assert "spec.tfReplicaSpecs.Worker.replicas" in fields
    assert "replicas" in str(invalid.value)
    client.delete(name)


def test_create_from_yaml_path_and_typed_object_then_list_and_delete(client, operator, tmp_path):
    from_path = unique("sdk-yaml")
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(python_job(from_path, "pass", labels={"suite": "sdk-list"})))
    client.create(path)
    from_object = unique("sdk-obj")
    client.create(TFJob.from_dict(python_job(from_object, "pass", labels={"suite": "sdk-list"})))
    names = [j["metadata"]["name"] for j in client.list(label_selector="suite=sdk-list")]
    assert sorted(names) == sorted([from_path, from_object])
    assert from_path in [j["metadata"]["name"] for j in client.list(all_namespaces=True)]
    for name in names:
        client.delete(name)
    with pytest.raises(NotFound):
        client.get(from_path)


def test_suspend_and_resume(client, operator, tmp_path):
    """The operator answers ``suspend`` with the Suspended condition and no pods, ``resume``
    with new pods and a fresh start time."""
    name = unique("sdk-suspend")
    marker = tmp_path / "go"
    code = f"import os,time\nwhile not os.path.exists({str(marker)!r}): time.sleep(0.05)"
    client.create(python_job(name, code, workers=1))
    started = client.wait_for_job(name, conditions=["Running"], timeout=60)["status"]["startTime"]
    assert suspend_requested(client.suspend(name))
    suspended = client.wait_for_job(name, conditions=["Suspended"], timeout=60)
    assert is_suspended(suspended) and job_state(suspended) == "Suspended"
    wait_for(lambda: client.get_pod_names(name) == [], 30, what="the pods deleted")
    assert not suspend_requested(client.resume(name))
    running = client.wait_for_job(name, conditions=["Running"], timeout=60)
    assert not is_suspended(running) and running["status"]["startTime"] >= started
    marker.touch()
    assert job_state(client.wait_for_job(name, timeout=60)) == "Succeeded"
