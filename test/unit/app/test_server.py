"""Startup and shutdown of the operator process against the fake API (no HTTP server)."""

import json
import threading

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.app import server
from tf_operator.app.options import ServerOption
from tf_operator.controller.v1.tensorflow import TFJOBS
from tf_operator.k8s.client import ENDPOINTS, LEASES, PODS, new_not_found
from tf_operator.k8s.client.scope import WriteFenced
from tf_operator.k8s.leaderelection import LEADER_ANNOTATION


class FakeController:
    def __init__(self):
        self.running = threading.Event()
        self.stopped = threading.Event()
        self.calls = []

    def run(self, threadiness, stop):
        self.calls.append(threadiness)
        self.running.set()
        stop.wait()
        self.stopped.set()


class FakeFactory:
    def __init__(self):
        self.started = False

    def start(self, stop):
        self.started = True


class FakeInformer:
    def has_synced(self):
        return True


class FakeBroadcaster:
    def __init__(self):
        self.shut = False

    def shutdown(self):
        self.shut = True


@pytest.fixture
def wiring(monkeypatch):
    w = server.Wiring(
        controller=FakeController(),
        factories=[FakeFactory(), FakeFactory()],
        job_informers=[FakeInformer()],
        broadcaster=FakeBroadcaster(),
        recorder=None,
    )
    monkeypatch.setattr(server, "build_controller", lambda opt, client: w)
    monkeypatch.setattr(server, "configure_logging", lambda *a, **k: None)
    monkeypatch.delenv("KUBEFLOW_NAMESPACE", raising=False)
    return w


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


def options(**kw):
    base = dict(monitoring_port=0, monitoring_address="127.0.0.1", threadiness=3)
    base.update(kw)
    return ServerOption(**base)


def run_in_thread(opt, client, stop):
    result = {}

    def target():
        result["code"] = server.run(opt, stop=stop, kube_client=client, handle_signals=False)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result


def test_missing_crd_exits_1(wiring, caplog):
    client = FakeKubeClient()

    def not_found(action):
        return True, new_not_found("tfjobs", "", "kubeflow.org")

    client.prepend_reactor("list", "tfjobs", not_found)
    code = server.run(options(), stop=threading.Event(), kube_client=client, handle_signals=False)
    assert code == 1
    assert "CRD doesn't exist" in caplog.text
    assert not wiring.controller.calls


def test_other_list_errors_do_not_stop_startup(wiring):
    from tf_operator.k8s.client import new_internal_error

    client = FakeKubeClient()
    client.prepend_reactor("list", "tfjobs", lambda a: (True, new_internal_error("boom")))
    assert server.crd_exists(client, "", TFJOBS) is True
    client.prepend_reactor("list", "tfjobs", lambda a: (True, ConnectionError("refused")))
    assert server.crd_exists(client, "", TFJOBS) is True


def test_unbuildable_client_exits_1(wiring, monkeypatch, caplog):
    def broken(opt):
        raise ValueError("no configuration")

    monkeypatch.setattr(server, "build_kube_client", broken)
    assert server.run(options(), stop=threading.Event(), handle_signals=False) == 1
    assert "Error building kubeconfig: no configuration" in caplog.text


def test_without_leader_election_runs_controller_until_stopped(wiring):
    stop = threading.Event()
    thread, result = run_in_thread(options(leader_elect=False), FakeKubeClient(), stop)
    assert wiring.controller.running.wait(5)
    assert wiring.controller.calls == [3]
    assert all(f.started for f in wiring.factories)
    stop.set()
    thread.join(5)
    assert result["code"] == 0
    assert wiring.controller.stopped.is_set()
    assert wiring.broadcaster.shut


@pytest.mark.parametrize(("lock_type", "resource"), [("endpoints", ENDPOINTS), ("leases", LEASES)])
def test_leader_runs_controller_and_releases_lock_on_stop(wiring, monkeypatch, lock_type, resource):
    monkeypatch.setenv("KUBEFLOW_NAMESPACE", "kubeflow")
    client = FakeKubeClient()
    stop = threading.Event()
    opt = options(lock_type=lock_type, lease_duration=2, renew_deadline=1.5, retry_period=0.2)
    thread, result = run_in_thread(opt, client, stop)
    assert wiring.controller.running.wait(5)
    assert server.IS_LEADER._value.get() == 1
    lock = client.resource(resource).get("tf-operator", namespace="kubeflow")
    holder = _holder(lock, lock_type)
    assert holder.endswith(tuple("0123456789abcdef")) and "_" in holder
    stop.set()
    thread.join(5)
    assert result["code"] == 0
    assert wiring.controller.stopped.is_set()
    assert (
        _holder(client.resource(resource).get("tf-operator", namespace="kubeflow"), lock_type) == ""
    )
    assert server.IS_LEADER._value.get() == 0


def test_lost_leadership_is_fatal(wiring):
    client = FakeKubeClient()
    stop = threading.Event()
    opt = options(lease_duration=2, renew_deadline=1.0, retry_period=0.2)
    thread, result = run_in_thread(opt, client, stop)
    assert wiring.controller.running.wait(5)
    # Every renewal fails from now on: the elector must give up after the renew deadline.
    client.prepend_reactor("update", "endpoints", lambda a: (True, RuntimeError("api down")))
    thread.join(10)
    assert not thread.is_alive()
    assert result["code"] == 1
    assert wiring.controller.stopped.is_set()


def test_the_leader_writes_through_its_lease(wiring, monkeypatch):
    """The controller's client is fenced by the lease: writes pass while it is held and are
    refused once it is released; the lock's own writes are not fenced."""
    clients = []

    def capture(opt, client):
        clients.append(client)
        return wiring

    monkeypatch.setattr(server, "build_controller", capture)
    kube = FakeKubeClient()
    stop = threading.Event()
    opt = options(lease_duration=2, renew_deadline=1.5, retry_period=0.2)
    thread, result = run_in_thread(opt, kube, stop)
    assert wiring.controller.running.wait(5)
    pods = clients[0].resource(PODS)
    pods.create(POD, namespace="default")
    stop.set()
    thread.join(5)
    assert result["code"] == 0
    with pytest.raises(WriteFenced):
        pods.delete("p", namespace="default")
    assert (
        _holder(kube.resource(ENDPOINTS).get("tf-operator", namespace="default"), "endpoints") == ""
    )


def test_the_migration_lock_holds_both_objects(wiring):
    kube = FakeKubeClient()
    stop = threading.Event()
    opt = options(
        lock_type="endpointsleases", lease_duration=2, renew_deadline=1.5, retry_period=0.2
    )
    thread, _ = run_in_thread(opt, kube, stop)
    assert wiring.controller.running.wait(5)
    endpoints = kube.resource(ENDPOINTS).get("tf-operator", namespace="default")
    lease = kube.resource(LEASES).get("tf-operator", namespace="default")
    assert _holder(endpoints, "endpoints") == _holder(lease, "leases") != ""
    stop.set()
    thread.join(5)


def _holder(obj, lock_type):
    if lock_type == "leases":
        return obj["spec"].get("holderIdentity", "")
    return json.loads(obj["metadata"]["annotations"][LEADER_ANNOTATION]).get("holderIdentity", "")


class CrashingController(FakeController):
    def run(self, threadiness, stop):
        self.running.set()
        raise RuntimeError("cache never synced")


@pytest.mark.parametrize("leader_elect", [True, False])
def test_controller_crash_exits_1_and_releases_lock(wiring, leader_elect):
    wiring.controller = CrashingController()
    client = FakeKubeClient()
    opt = options(leader_elect=leader_elect, lease_duration=2, renew_deadline=1.5, retry_period=0.2)
    code = server.run(opt, stop=threading.Event(), kube_client=client, handle_signals=False)
    assert code == 1
    if leader_elect:
        lock = client.resource(ENDPOINTS).get("tf-operator", namespace="default")
        assert _holder(lock, "endpoints") == ""


def test_each_enabled_kind_gets_a_controller_over_the_shared_informers():
    from tf_operator.app.group import ControllerGroup

    opt = options(enable_scheme=("tfjob", "pytorchjob"), leader_elect=False)
    wiring = server.build_controller(opt, FakeKubeClient())
    assert isinstance(wiring.controller, ControllerGroup)
    (tf_name, tf_ctr), (pt_name, pt_ctr) = wiring.controller.members
    assert (tf_name, pt_name) == ("tfjob", "pytorchjob")
    assert (tf_ctr.kind.resource.plural, pt_ctr.kind.resource.plural) == ("tfjobs", "pytorchjobs")
    assert tf_ctr.pods._informer is pt_ctr.pods._informer  # one pod informer, one cache
    assert tf_ctr.services._informer is pt_ctr.services._informer
    assert tf_ctr.config.defaults.release == "v0.5.3"  # --defaults
    assert pt_ctr.config.defaults.release == "v1.9"  # a PyTorchJob's are v1.9's (D81)
    assert len(wiring.job_informers) == 2
    # the TFJob informer resyncs every 30 s as v0.5.3's; the PyTorchJob one by --resyc-period
    assert sorted(f.resync_period for f in wiring.factories) == [30.0, opt.resync_period]
    wiring.broadcaster.shutdown()


def test_a_missing_crd_of_an_enabled_kind_is_named(wiring, caplog):
    client = FakeKubeClient()
    client.prepend_reactor(
        "list", "pytorchjobs", lambda a: (True, new_not_found("pytorchjobs", "", "kubeflow.org"))
    )
    opt = options(enable_scheme=("tfjob", "pytorchjob"))
    assert server.run(opt, stop=threading.Event(), kube_client=client, handle_signals=False) == 1
    assert "install pytorchjobs.kubeflow.org" in caplog.text
    assert "manifests/components/pytorchjob/crd.yaml" in caplog.text


def test_every_kind_enabled_at_once_shares_one_pod_and_one_service_informer():
    opt = options(
        enable_scheme=("tfjob", "pytorchjob", "xgboostjob", "jaxjob", "paddlejob"),
        leader_elect=False,
    )
    wiring = server.build_controller(opt, FakeKubeClient())
    members = wiring.controller.members
    assert [name for name, _ in members] == list(opt.enable_scheme)
    plurals = [ctr.kind.resource.plural for _, ctr in members]
    assert plurals == ["tfjobs", "pytorchjobs", "xgboostjobs", "jaxjobs", "paddlejobs"]
    assert len({id(ctr.pods._informer) for _, ctr in members}) == 1
    assert len({id(ctr.services._informer) for _, ctr in members}) == 1
    # the three new kinds get v1.9's defaults, whatever --defaults says (D130-D132)
    assert [ctr.config.defaults.release for _, ctr in members[2:]] == ["v1.9"] * 3
    assert len(wiring.job_informers) == 5
    wiring.broadcaster.shutdown()


@pytest.mark.parametrize("scheme", ["xgboostjob", "jaxjob", "paddlejob"])
def test_a_missing_crd_of_a_new_kind_is_named(wiring, caplog, scheme):
    client = FakeKubeClient()
    client.prepend_reactor(
        "list", f"{scheme}s", lambda a: (True, new_not_found(f"{scheme}s", "", "kubeflow.org"))
    )
    opt = options(enable_scheme=("tfjob", scheme))
    assert server.run(opt, stop=threading.Event(), kube_client=client, handle_signals=False) == 1
    assert f"install {scheme}s.kubeflow.org" in caplog.text
    assert f"manifests/components/{scheme}/crd.yaml" in caplog.text
