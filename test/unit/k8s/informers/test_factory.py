import threading

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.k8s.cache import DeletedFinalStateUnknown, ResourceEventHandlerFuncs
from tf_operator.k8s.client import NODES, PODS, SERVICES, Resource

TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")


def obj(name, ns="ns"):
    return {
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


@pytest.fixture
def stop():
    ev = threading.Event()
    yield ev
    ev.set()


def factory_for(fake, **kw):
    from tf_operator.k8s.informers import SharedInformerFactory

    return SharedInformerFactory(fake, 30.0, **kw)


def test_one_informer_per_resource_and_sync(stop):
    fake = FakeKubeClient({PODS: [obj("p")], SERVICES: [obj("s")], TFJOBS: [obj("j")]})
    factory = factory_for(fake)
    assert factory.pods() is factory.pods() is factory.for_resource(PODS)
    assert factory.services() is not factory.pods()
    jobs = factory.for_resource(TFJOBS)
    factory.start(stop)
    synced = factory.wait_for_cache_sync(stop, timeout=5)
    assert synced == {PODS: True, SERVICES: True, TFJOBS: True}
    job = jobs.get_indexer().get_by_key("ns/j")
    assert job["kind"] == "TFJob" and job["apiVersion"] == "kubeflow.org/v1"
    assert factory.lister(PODS).namespaced("ns").get("p") is not None
    factory.start(stop)  # starting again starts nothing new
    assert len(factory._threads) == 3
    stop.set()
    factory.join(5)
    assert not any(t.is_alive() for t in factory._threads)


def test_namespace_filter_applies_to_namespaced_resources_only(stop):
    fake = FakeKubeClient(
        {PODS: [obj("mine", "a"), obj("theirs", "b")], NODES: [{"metadata": {"name": "n1"}}]}
    )
    factory = factory_for(fake, namespace="a")
    pods, nodes = factory.pods(), factory.nodes()
    factory.start(stop)
    assert all(factory.wait_for_cache_sync(stop, timeout=5).values())
    assert pods.get_indexer().list_keys() == ["a/mine"]
    assert nodes.get_indexer().list_keys() == ["n1"]
    assert [a.namespace for a in fake.filter_actions("list", "pods")] == ["a"]


def test_informer_started_later_needs_another_start(stop):
    fake = FakeKubeClient({PODS: [obj("p")], SERVICES: [obj("s")]})
    factory = factory_for(fake)
    factory.pods()
    factory.start(stop)
    services = factory.services()
    assert factory.wait_for_cache_sync(stop, timeout=5) == {PODS: True}
    assert not services.has_synced()
    factory.start(stop)
    assert factory.wait_for_cache_sync(stop, timeout=5) == {PODS: True, SERVICES: True}


def test_handlers_on_factory_informer_see_deletes(stop):
    fake = FakeKubeClient({PODS: [obj("p")]})
    factory = factory_for(fake)
    deleted = []
    done = threading.Event()

    def on_delete(o):
        deleted.append(o)
        done.set()

    factory.pods().add_event_handler(ResourceEventHandlerFuncs(delete=on_delete))
    factory.start(stop)
    assert all(factory.wait_for_cache_sync(stop, timeout=5).values())
    fake.resource(PODS).delete("p", "ns")
    assert done.wait(5)
    assert not isinstance(deleted[0], DeletedFinalStateUnknown)
    assert deleted[0]["metadata"]["name"] == "p"
