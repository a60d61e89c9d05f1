"""A job whose creates the API server refuses (kube-apiserver's Priority admission: a template
naming a PriorityClass that does not exist; a quota; an invalid template) says so in its
Created condition and with one Warning event, and clears it once its creates go through
(D157); with Kubernetes' own gang scheduling the refusal meets the PodGroup first."""

from tf_operator.k8s.client import PODS, SERVICES, new_forbidden

REFUSAL = "no PriorityClass with name nosuch was found"


def _observe_created(harness):
    for resource, informer, owned in (
        (PODS, harness.pod_informer, harness.ctr.pods),
        (SERVICES, harness.service_informer, harness.ctr.services),
    ):
        for obj in harness.client.resource(resource).list(namespace="default")["items"]:
            if informer.get_indexer().get(obj) is None:
                informer.get_indexer().add(obj)
                owned.on_add(obj)


def _refusing(harness, plural, refusing):
    """Refuse every create of ``plural`` while ``refusing`` holds True, as kube-apiserver's
    Priority admission does while the class is missing."""

    def react(action):
        if not refusing[0]:
            return False, None
        name = (action.body or {}).get("metadata", {}).get("name", "")
        group = "scheduling.k8s.io" if plural == "podgroups" else ""
        return True, new_forbidden(plural, name, REFUSAL, group)

    harness.client.prepend_reactor("create", plural, react)


def _created_message(harness, job):
    (created,) = [c for c in harness.status(job)["conditions"] if c["type"] == "Created"]
    return created["message"]


def _pass(harness, job):
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    _observe_created(harness)


def test_refused_pod_creates_are_told_once_and_cleared_when_they_go_through(harness, k):
    refusing = [True]
    _refusing(harness, "pods", refusing)
    job = harness.add_job(k.new_job(2))
    base = f"{k.kind_name} test-tfjob is created."
    why = f'the API server refuses: pods "test-tfjob-worker-0" is forbidden: {REFUSAL}'
    for _ in range(3):  # the refused create's retries: told once
        _pass(harness, job)
    assert _created_message(harness, job) == f"{base} Blocked: {why}"
    told = [e for e in harness.recorder.events if e.startswith("Warning CreateRefused ")]
    assert told == [f"Warning CreateRefused {why}"]
    assert "Failed" not in [c[0] for c in harness.conditions(job)]  # it waits, as v1.9's did
    refusing[0] = False  # the PriorityClass is made
    _pass(harness, job)  # the creates go through
    _pass(harness, job)  # the pass after them tells the job
    assert _created_message(harness, job) == base
    assert len(harness.client.resource(PODS).list(namespace="default")["items"]) == 2


def test_a_refused_pod_group_is_told_and_looked_at_again(make_harness, k, monkeypatch):
    """Kubernetes' own gang scheduling: the PodGroup carries the templates' priority class,
    and kube-apiserver refuses it first; no pod is made, the job says why and looks again
    every 10 s."""
    harness = make_harness(gang=True, scheduler="kubernetes")
    rechecks = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda *a: rechecks.append(a))
    refusing = [True]
    _refusing(harness, "podgroups", refusing)
    job = harness.add_job(k.new_job(2))
    _pass(harness, job)
    _pass(harness, job)
    message = _created_message(harness, job)
    assert message.startswith(f"{k.kind_name} test-tfjob is created. Blocked: its PodGroup ")
    assert message.endswith(f"is forbidden: {REFUSAL}")
    assert len([e for e in harness.recorder.events if "Warning PodGroupRefused " in e]) == 1
    assert harness.created("pods") == []
    assert rechecks[-1] == ("default/test-tfjob", 10.0)
    refusing[0] = False
    _pass(harness, job)
    _pass(harness, job)
    assert _created_message(harness, job) == f"{k.kind_name} test-tfjob is created."
    assert len(harness.created("pods")) == 2


def _set_suspend(harness, job, suspend):
    stored = harness.stored_job(job)
    stored["spec"].setdefault("runPolicy", {})["suspend"] = suspend
    harness.cache_job(harness.client.resource(harness.ctr.kind.resource).update(stored, "default"))


def test_a_suspended_job_waits_for_nothing(harness, k):
    """Suspended, the job has nothing to create: the reason it was blocked goes."""
    refusing = [True]
    _refusing(harness, "pods", refusing)
    job = harness.add_job(k.new_job(2))
    base = f"{k.kind_name} test-tfjob is created."
    for _ in range(2):
        _pass(harness, job)
    assert _created_message(harness, job).startswith(f"{base} Blocked: ")
    _set_suspend(harness, job, True)
    _pass(harness, job)
    assert ("Suspended", "True") in [c[:2] for c in harness.conditions(job)]
    assert _created_message(harness, job) == base
