"""Startup and shutdown of the operator process, following v0.5.3's ``app/server.go``.

`run` is the whole life of the process after flag parsing: configure logging, start the
monitoring endpoint, build the API client, refuse to start when the CRD of an enabled job kind
is missing, wire the informers (pods and services shared by every kind), the event recorders
and one controller per kind enabled with ``--enable-scheme`` (run together as one
:class:`~tf_operator.app.group.ControllerGroup`), start the informers (followers keep warm
caches, as upstream), then either run the controllers under leader election or directly. A first
SIGTERM/SIGINT sets the stop event: the controller drains its workers, then the lock is
released (a successor takes over at its next retry) and `run` returns 0; a second signal
exits at once with 1; SIGUSR1 writes every thread's stack to stderr. Losing leadership while
not stopping is fatal (exit 1), as ``log.Fatalf("leader election lost")`` was upstream. Under
leader election the controller and the event recorder write through a write fence
(:mod:`tf_operator.k8s.leaderelection.fence`): no write leaves the process unless its lease is
surely still its own, so a process whose renewal is stuck (or that lost the lease while a
write waited) cannot reconcile beside its successor (divergence D66).
The collaborators are created by small factory functions so tests can substitute fakes.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import socket
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import Gauge

from tf_operator import version
from tf_operator.app.monitoring import MonitoringServer
from tf_operator.app.options import (
    DEFAULT_LOCK_NAMESPACE,
    ENV_KUBEFLOW_NAMESPACE,
    ServerOption,
)
from tf_operator.k8s.workqueue.prometheus_metrics import enable_prometheus_metrics
from tf_operator.logger import configure_logging, flush_logs

if TYPE_CHECKING:  # imported where used, as the rest: start-up loads only what it runs
    from tf_operator.common.jobcontroller.jobcontroller import JobControllerConfiguration
    from tf_operator.controller.v1.registry import Scheme
    from tf_operator.k8s.client import Resource
    from tf_operator.k8s.leaderelection import LeaderElector

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILURE = 1
COMPONENT = "tf-operator"
# How long shutdown waits for the controller to drain after the elector returned.
DRAIN_TIMEOUT = 3.0

IS_LEADER = Gauge(
    "tf_operator_is_leader", "Is this client the leader of this tf-operator client set?"
)


class LeaseFence:
    """The leader's write fence, bound to its elector once that exists (closed before)."""

    def __init__(self) -> None:
        self.elector: Any = None

    def holds_lease(self) -> bool:
        elector = self.elector
        return elector is not None and bool(elector.holds_lease())


@dataclass
class RunState:
    """What one process run created; kept so tests can inspect it."""

    stop: threading.Event
    lock_namespace: str = DEFAULT_LOCK_NAMESPACE
    identity: str = ""
    monitor: MonitoringServer | None = None
    leadership_lost: bool = False
    controller_failed: bool = False
    controller_done: threading.Event = field(default_factory=threading.Event)
    fence: LeaseFence = field(default_factory=LeaseFence)


def lock_namespace_from_env() -> str:
    """Namespace of the leader-election lock: ``$KUBEFLOW_NAMESPACE`` or ``default``."""
    namespace = os.environ.get(ENV_KUBEFLOW_NAMESPACE, "")
    if not namespace:
        log.info("EnvKubeflowNamespace not set, use default namespace")
        return DEFAULT_LOCK_NAMESPACE
    return namespace


def new_identity() -> str:
    """Hostname plus a random suffix, so two processes on one host never share an identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def install_signal_handlers(stop: threading.Event) -> None:
    """First SIGTERM/SIGINT requests a graceful stop; a second one exits immediately."""

    def handle(signum: int, _frame: object) -> None:
        if stop.is_set():
            flush_logs()
            os._exit(EXIT_FAILURE)
        log.info("Received signal %s, shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    # Every thread's stack to stderr on SIGUSR1, the process running on: what Go's SIGQUIT
    # dump gives, for an operator that seems stuck.
    faulthandler.register(signal.SIGUSR1, all_threads=True)


def start_monitoring(opt: ServerOption) -> MonitoringServer | None:
    """Start the metrics/probe endpoint; a failure is logged and startup continues."""
    enable_prometheus_metrics()  # before the controller builds its workqueue
    try:
        monitor = MonitoringServer(opt.monitoring_port, opt.monitoring_address)
    except OSError as err:
        log.error("Monitoring endpoint setup failure. (%s)", err)
        return None
    monitor.set_ready_check(lambda: False)
    monitor.start()
    log.info("Setting up client for monitoring on port: %d", monitor.port)
    return monitor


def enabled_schemes(opt: ServerOption) -> list[Scheme]:
    """The job kinds ``--enable-scheme`` names, from the registry."""
    from tf_operator.controller.v1.registry import enabled_schemes

    return enabled_schemes(opt.enable_scheme)


def crd_exists(kube_client: Any, namespace: str, resource: Resource) -> bool:
    """List the jobs once; only a 404 means the CRD is missing (other errors are logged)."""
    from tf_operator.k8s.client import ApiError, is_not_found

    try:
        kube_client.resource(resource).list(namespace=namespace or None, limit=1)
    except ApiError as err:
        log.error("listing %s failed: %s", resource.plural, err)
        return not is_not_found(err)
    except Exception as err:  # unreachable server etc.: the informers will keep retrying
        log.error("listing %s failed: %s", resource.plural, err)
    return True


def build_kube_client(opt: ServerOption) -> Any:
    """Client from --master/--kubeconfig/KUBECONFIG, else in-cluster configuration."""
    from tf_operator.k8s.client import load_kube_client

    return load_kube_client(
        kubeconfig=opt.kubeconfig or None,
        master=opt.master or None,
        user_agent=f"{COMPONENT}/{version.__version__}",
    )


@dataclass
class Wiring:
    """The objects `build_controller` creates for one run."""

    controller: Any  # every enabled kind's controller, run as one (ControllerGroup)
    factories: list[Any]
    job_informers: list[Any]  # one per kind: the process is ready once all have synced
    broadcaster: Any
    recorder: Any  # the process's own (leader election); each controller has its kind's


def controller_configuration(opt: ServerOption) -> JobControllerConfiguration:
    """The settings every kind's controller takes from the flags (typed)."""
    from tf_operator.apis.common.v1.run_policy import DEFAULTS
    from tf_operator.common.jobcontroller.jobcontroller import JobControllerConfiguration

    return JobControllerConfiguration(
        enable_gang_scheduling=opt.enable_gang_scheduling,
        gang_scheduler_name=opt.gang_scheduler_name,
        pod_updates_batch_period=opt.pod_updates_batch_period,
        defaults=DEFAULTS[opt.defaults],
    )


def build_controller(opt: ServerOption, kube_client: Any) -> Wiring:
    """Create the informer factories, the event broadcaster and recorders, and one controller
    per enabled kind over the shared pod and service informers."""
    from tf_operator.app.group import ControllerGroup
    from tf_operator.k8s.informers import SharedInformerFactory
    from tf_operator.k8s.record import EventBroadcaster

    namespace = opt.namespace or None
    kube_factory = SharedInformerFactory(kube_client, opt.resync_period, namespace=namespace)
    factories = {opt.resync_period: kube_factory}
    broadcaster = EventBroadcaster(kube_client)
    config = controller_configuration(opt)
    members, job_informers = [], []
    for scheme in enabled_schemes(opt):
        period = opt.resync_period if scheme.resync_period is None else scheme.resync_period
        if period not in factories:
            factories[period] = SharedInformerFactory(kube_client, period, namespace=namespace)
        job_informer = factories[period].for_resource(scheme.resource)
        recorder = broadcaster.new_recorder(scheme.component)
        controller = scheme.new_controller(
            kube_client, kube_factory, job_informer, recorder, scheme.configuration(config)
        )
        members.append((scheme.name, controller))
        job_informers.append(job_informer)
    return Wiring(
        ControllerGroup(members),
        list(factories.values()),
        job_informers,
        broadcaster,
        broadcaster.new_recorder(COMPONENT),
    )


def new_leader_elector(
    opt: ServerOption, kube_client: Any, state: RunState, callbacks: Any, recorder: Any = None
) -> LeaderElector:
    """A `LeaderElector` on the configured lock kind, in the lock namespace."""
    from tf_operator.k8s.leaderelection import LeaderElector, new_lock

    lock = new_lock(
        opt.lock_type, kube_client, state.lock_namespace, opt.lock_name, state.identity, recorder
    )
    return LeaderElector(
        lock,
        callbacks,
        lease_duration=opt.lease_duration,
        renew_deadline=opt.renew_deadline,
        retry_period=opt.retry_period,
        # Released by _run_elected only after the workers drained, so a successor never
        # overlaps with a sync still in flight here.
        release_on_cancel=False,
    )


def run(
    opt: ServerOption,
    stop: threading.Event | None = None,
    kube_client: Any = None,
    handle_signals: bool = True,
) -> int:
    """Run the operator until stopped; return the process exit code."""
    configure_logging(
        opt.json_log_format, logging.DEBUG if opt.log_verbosity >= 4 else logging.INFO
    )
    state = RunState(stop=stop or threading.Event())
    state.monitor = start_monitoring(opt)
    try:
        return _run(opt, state, kube_client, handle_signals)
    finally:
        IS_LEADER.set(0)
        if state.monitor is not None:
            state.monitor.stop()


def _run(opt: ServerOption, state: RunState, kube_client: Any, handle_signals: bool) -> int:
    state.lock_namespace = lock_namespace_from_env()
    if opt.namespace:
        log.info("Scoping operator to namespace %s", opt.namespace)
    else:
        log.info("Using cluster scoped operator")
    log.info(
        "Version: %s (API %s, upstream %s)", version.__version__, "v1", version.UPSTREAM_VERSION
    )
    if handle_signals:
        install_signal_handlers(state.stop)

    if kube_client is None:
        try:
            kube_client = build_kube_client(opt)
        except Exception as err:
            log.critical("Error building kubeconfig: %s", err)
            return EXIT_FAILURE
    for scheme in enabled_schemes(opt):
        if not crd_exists(kube_client, opt.namespace, scheme.resource):
            log.critical(
                "CRD doesn't exist. Exiting (install %s, e.g. kubectl apply -f %s)",
                scheme.crd_name,
                scheme.crd_manifest,
            )
            return EXIT_FAILURE

    wiring = build_controller(opt, _fenced(kube_client, state) if opt.leader_elect else kube_client)
    for factory in wiring.factories:
        factory.start(state.stop)
    if state.monitor is not None:
        informers = wiring.job_informers
        state.monitor.set_ready_check(lambda: all(i.has_synced() for i in informers))
    try:
        if opt.leader_elect:
            return _run_elected(opt, kube_client, wiring, state)
        _run_controller(opt, wiring.controller, state, state.stop)
        return EXIT_FAILURE if state.controller_failed else EXIT_OK
    finally:
        wiring.broadcaster.shutdown()
        log.info("tf-operator stopped")


def _fenced(kube_client: Any, state: RunState) -> Any:
    """The client the controller and the recorder write through under leader election."""
    from tf_operator.k8s.leaderelection.fence import FencedClient

    return FencedClient(kube_client, state.fence.holds_lease)


def _run_controller(
    opt: ServerOption, controller: Any, state: RunState, stop: threading.Event
) -> None:
    try:
        controller.run(opt.threadiness, stop)
    except Exception:
        log.exception("Failed to run the controller")
    finally:
        if not stop.is_set():
            # Not asked to stop: give up the process (and the lock) rather than lead idly.
            log.critical("controller stopped unexpectedly")
            state.controller_failed = True
            state.stop.set()
        state.controller_done.set()


def _warn_if_led_elsewhere(opt: ServerOption, kube_client: Any, state: RunState) -> None:
    """Say so when a replica on the other kind of lock of the same name leads too: they share
    no lock, so both run the controllers (a rolling update that changes the lock kind)."""
    from tf_operator.k8s.leaderelection import held_elsewhere

    holder = held_elsewhere(
        opt.lock_type,
        kube_client,
        state.lock_namespace,
        opt.lock_name,
        state.identity,
        datetime.now(UTC),
    )
    if holder is not None:
        log.warning(
            "another operator leads beside this one through the %s: the two do not exclude "
            "each other; move between lock kinds through --leader-elect-resource-lock="
            "endpointsleases, which holds both",
            holder,
        )


def _run_elected(opt: ServerOption, kube_client: Any, wiring: Wiring, state: RunState) -> int:
    from tf_operator.k8s.leaderelection import LeaderCallbacks

    state.identity = new_identity()
    started = threading.Event()

    def on_started_leading(lead_stop: threading.Event) -> None:
        started.set()
        IS_LEADER.set(1)
        log.info("became leader as %s", state.identity)
        _warn_if_led_elsewhere(opt, kube_client, state)
        _run_controller(opt, wiring.controller, state, lead_stop)

    def on_stopped_leading() -> None:
        IS_LEADER.set(0)
        if not state.stop.is_set():
            state.leadership_lost = True
            log.critical("leader election lost")
            state.stop.set()

    def on_new_leader(identity: str) -> None:
        if identity != state.identity:
            log.info("new leader elected: %s", identity)

    callbacks = LeaderCallbacks(
        on_started_leading=on_started_leading,
        on_stopped_leading=on_stopped_leading,
        on_new_leader=on_new_leader,
    )
    elector = new_leader_elector(opt, kube_client, state, callbacks, wiring.recorder)
    state.fence.elector = elector
    log.info("attempting to acquire leader lease %s/%s", state.lock_namespace, opt.lock_name)
    elector.run(state.stop)
    if started.is_set() and not state.controller_done.wait(DRAIN_TIMEOUT):
        log.warning("controller did not drain within %.0fs", DRAIN_TIMEOUT)
    if state.leadership_lost:
        return EXIT_FAILURE
    if started.is_set():
        elector.release()
    return EXIT_FAILURE if state.controller_failed else EXIT_OK
