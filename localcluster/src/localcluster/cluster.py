"""``LocalCluster``: an API server plus nodes, scheduler, kubelets and endpoints, in one process.

The pieces talk to each other only through one ``ClusterClient`` (``cluster.client``: watch
and write, like real components over HTTP), built once here: by default an
``InProcessClient`` over the emulator's registry; with ``agents_over_http=True`` an
``HttpClient`` to the emulator's own listener; with ``api_server=ExternalAPIServer(...)`` an
``HttpClient`` to that API server (a real kube-apiserver), and no emulator is started.
``kubelet`` picks the runtime:

- ``"none"``: no nodes, no scheduler; pods stay Pending unless a client writes
  their status (envtest style).
- ``"simulated"``: pods run on timers driven by annotations (see
  ``kubelet.simulated``); cheap enough for thousands of pods.
- ``"process"``: containers' commands run as local processes, with per-pod
  loopback IPs, logs through ``kubectl logs``, service DNS (``kubelet.dns``), the
  service-account token at its standard path and images mapped to local commands
  (``kubelet.images``: declared by installed distributions, plus ``images``).

Like kind, the cluster runs what kube-controller-manager would (``controllers``; off by
default with an external API server, which brings its own, as it brings its kube-scheduler):
endpoints, Deployments and ReplicaSets, PodDisruptionBudgets' status, the ``default`` ServiceAccount and ``kube-root-ca.crt``
of every namespace, ClusterRole aggregation; its API server
enables ServiceAccount admission and RBAC. With the process kubelet an HTTPS listener
(``secure_url``) serves in-cluster clients, which authenticate with service-account tokens.

Use it as a context manager; ``kubeconfig`` is the path of a kubeconfig that
kubectl and the Python client accept unchanged (as ``system:masters``).

``kubelet_server=True`` (the default with ``api_server=``) starts the kubelets' HTTPS server
(``GET /containerLogs/...``, what kube-apiserver's ``pods/log`` proxies to): every Node names
its port (``kubelet_port``), its certificates are in ``kubelet_pki``.

``node_pools`` gives nodes of different shapes (``NodePool``: labels, taints, GPUs);
``batch_schedulers=("volcano",)`` adds kube-batch / Volcano gang scheduling (off by default;
see ``localcluster.batchscheduler``), ``scheduler_plugins=True`` scheduler-plugins'
coscheduling (``localcluster.coscheduling``). All schedulers share one ``NodeLedger``.

``crds`` are CustomResourceDefinitions served before any controller starts, as in a cluster
that has had them for long (on the real control plane, kube-controller-manager's garbage
collector would otherwise learn of them only at its next 30 s discovery sync).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from localcluster.apimachinery.errors import StatusError
from localcluster.client.api import ClusterClient
from localcluster.client.http import HttpClient
from localcluster.client.inprocess import InProcessClient
from localcluster.client.served import wait_until_served
from localcluster.controllers.clusterrole_aggregation import ClusterRoleAggregation
from localcluster.controllers.deployment import DeploymentController
from localcluster.controllers.disruption import DisruptionController
from localcluster.controllers.endpoints import EndpointsController
from localcluster.controllers.namespace_objects import (
    default_service_accounts,
    root_ca_publisher,
)
from localcluster.controllers.podgroup_protection import PodGroupProtection
from localcluster.controllers.replicaset import ReplicaSetController
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.server import APIServer
from localcluster.controlplane.emulated.serving.kubeconfig import write_kubeconfig
from localcluster.controlplane.real import RealControlPlane
from localcluster.coscheduling import CoschedulingArgs, CoschedulingScheduler, PodGroupController
from localcluster.features import REAL_FEATURE_GATES, REAL_RUNTIME_CONFIG
from localcluster.kubelet.backoff import DEFAULT_MAX
from localcluster.kubelet.dns import ClusterHosts, resolve_mode
from localcluster.kubelet.images import ImageTable, LocalImage, discover
from localcluster.kubelet.ipam import IPAllocator
from localcluster.kubelet.kubelet import DEFAULT_RESTART_DELAY, Kubelet
from localcluster.kubelet.node import NodeConfig
from localcluster.kubelet.process import ProcessRuntime
from localcluster.kubelet.runtime import ContainerRuntime, LogRequest, LogUnavailable
from localcluster.kubelet.server import KubeletServer, LogNotFound
from localcluster.kubelet.serviceenv import InClusterAPI, from_endpoints
from localcluster.kubelet.simulated import SimulatedRuntime
from localcluster.kubelet.timers import TimerQueue
from localcluster.nodepool import NodePool
from localcluster.pki import CertificateAuthority, KeyPair
from localcluster.scheduler import Scheduler
from localcluster.scheduler.ledger import NodeLedger

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


def install_crds(client: ClusterClient, crds: Sequence[Mapping[str, Any]]) -> None:
    """Create each CRD and return once every one is served."""
    for crd in crds:
        client.create(CRDS, None, dict(crd))
    for crd in crds:
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("storage"))
        wait_until_served(client, (spec["group"], version, spec["names"]["plural"]))


logger = logging.getLogger(__name__)

KUBELET_MODES = ("none", "simulated", "process")
# The emulator in this process, or etcd and Kubernetes' own servers (``controlplane.real``).
CONTROL_PLANES = ("emulated", "real")


@dataclass
class NodeSpec:
    """Capacity and labels given to every node of the cluster."""

    cpu: str = "8"
    memory: str = "32Gi"
    gpus: int = 0
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class SimulatedTiming:
    """Timing of the simulated kubelet (seconds)."""

    start_delay: float = 0.5
    restart_delay: float = DEFAULT_RESTART_DELAY  # first restart back-off (both kubelets)
    default_run_seconds: float | None = None
    max_restart_delay: float = DEFAULT_MAX  # the back-off doubles up to this


@dataclass(frozen=True)
class ExternalAPIServer:
    """An API server the cluster's agents attach to instead of starting the emulator.

    ``url`` is where the agents connect, with ``token`` and/or ``client_cert`` (certificate
    file, key file), verifying the server with ``ca_file``; ``kubeconfig`` is the file users,
    kubectl and tests are given (``cluster.kubeconfig``).
    """

    url: str
    kubeconfig: str
    token: str | None = None
    ca_file: str | None = None
    client_cert: tuple[str, str] | None = None
    insecure_skip_tls_verify: bool = False
    # where process pods reach it (KUBERNETES_SERVICE_HOST/PORT); default: the
    # ``default/kubernetes`` Endpoints, else the host and port of ``url``
    in_cluster: InClusterAPI | None = None

    def client(self, user_agent: str) -> HttpClient:
        return HttpClient(
            self.url,
            token=self.token,
            ca_file=self.ca_file,
            client_cert=self.client_cert,
            insecure_skip_tls_verify=self.insecure_skip_tls_verify,
            user_agent=user_agent,
        )


@dataclass(frozen=True)
class KubeletPKI:
    """The kubelets' HTTPS server's certificates, for the API server that connects to it.

    ``ca_file`` signed the serving certificate (kube-apiserver's
    ``--kubelet-certificate-authority``); the server accepts clients whose certificate
    ``client_ca_file`` signed; ``client`` is such a certificate when the cluster made that CA
    itself (kube-apiserver's ``--kubelet-client-certificate`` / ``--kubelet-client-key``).
    """

    ca_file: str
    serving: KeyPair
    client_ca_file: str
    client: KeyPair | None


# The User-Agent of the agents' requests over HTTP (``apiserver_request_total``'s client label).
AGENTS_USER_AGENT = "localcluster-agents"


class LocalCluster:
    """A whole local Kubernetes cluster in this process (see module docstring)."""

    def __init__(
        self,
        kubelet: str = "process",
        nodes: int = 1,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        kubeconfig: str | None = None,
        watch_history: int = 10000,
        tls: bool = False,
        token: str | None = None,
        node: NodeSpec | None = None,
        simulated: SimulatedTiming | None = None,
        dns: str = "auto",
        cluster_domains: tuple[str, ...] = ("cluster.local",),
        state_dir: str | None = None,
        scheduler: bool | None = None,
        endpoints: bool = True,
        node_pools: list[NodePool] | None = None,
        batch_schedulers: tuple[str, ...] = (),
        batch_scheduler_conf: dict[str, Any] | None = None,
        batch_schedule_period: float = 1.0,
        scheduler_plugins: bool = False,
        coscheduling_args: Mapping[str, object] | None = None,
        secure_port: int | None = None,
        authorization_mode: str = "RBAC",
        insecure: bool = False,
        images: Mapping[str, LocalImage] | None = None,
        discover_images: bool = True,
        agents_over_http: bool = False,
        api_server: ExternalAPIServer | None = None,
        controllers: bool | None = None,
        kubelet_server: bool | None = None,
        kubelet_ca: CertificateAuthority | None = None,
        kubelet_client_ca: str | None = None,
        control_plane: str = "emulated",
        apiserver_args: tuple[str, ...] = (),
        crds: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        if kubelet not in KUBELET_MODES:
            raise ValueError(f"kubelet must be one of {KUBELET_MODES}, not {kubelet!r}")
        if control_plane not in CONTROL_PLANES:
            raise ValueError(
                f"control_plane must be one of {CONTROL_PLANES}, not {control_plane!r}"
            )
        if control_plane == "real" and api_server is not None:
            raise ValueError("control_plane='real' starts its own API server: give no api_server")
        if apiserver_args and control_plane != "real":
            raise ValueError("apiserver_args are kube-apiserver flags: control_plane='real' only")
        # more kube-apiserver flags (e.g. an audit log) for the real control plane
        self._apiserver_args = list(apiserver_args)
        # CustomResourceDefinitions served before any controller starts, as in a cluster where
        # they were installed long ago: kube-controller-manager's garbage collector learns of
        # resources that appear later only at its next discovery sync (every 30 s), so until
        # then it neither collects their dependents nor deletes them in the foreground
        self._crds = [dict(crd) for crd in crds]
        self.control_plane = control_plane
        # the real control plane is started in start(); its servers stand in for the emulator's
        # scheduler and controllers, as an external API server's do
        self.real_plane: RealControlPlane | None = None
        self.kubelet_mode = kubelet
        self.node_spec = node or NodeSpec()
        # node pools (``<pool>-<i>`` nodes) replace ``nodes`` x ``node`` when given
        self.node_pools = list(node_pools or [])
        self.node_count = 0 if kubelet == "none" else len(self._node_configs(nodes))
        self._nodes_requested = nodes
        self._batch = (tuple(batch_schedulers), batch_scheduler_conf, batch_schedule_period)
        self.batch_schedulers: dict[str, Any] = {}  # flavour name -> BatchScheduler
        # scheduler-plugins (coscheduling): arguments checked now, so a typo fails at once
        self._coscheduling_args = (
            CoschedulingArgs.parse(dict(coscheduling_args or {})) if scheduler_plugins else None
        )
        self.coscheduling: CoschedulingScheduler | None = None
        self.podgroup_controller: PodGroupController | None = None
        self.timing = simulated or SimulatedTiming()
        self.dns_mode = "none"
        self._host, self._port, self._tls, self._token = host, port, tls, token
        self._watch_history = watch_history
        self._dns_request = dns
        self._domains = tuple(cluster_domains)
        self._own_state_dir = state_dir is None
        self.state_dir = state_dir or tempfile.mkdtemp(prefix="localcluster-")
        self._kubeconfig_path = kubeconfig or os.path.join(self.state_dir, "kubeconfig")
        # an external API server comes with its own kube-controller-manager and kube-scheduler
        self.external = api_server
        self._agents_over_http = agents_over_http
        emulated = api_server is None and control_plane == "emulated"
        default_scheduler = kubelet != "none" and emulated
        self._run_scheduler = default_scheduler if scheduler is None else scheduler
        self._run_controllers = emulated if controllers is None else controllers
        self._run_endpoints = endpoints and self._run_controllers
        # the kubelets' HTTPS server (containerLogs), which an external API server proxies to
        want_server = not emulated if kubelet_server is None else kubelet_server
        self._kubelet_server_wanted = want_server and kubelet != "none"
        self._kubelet_ca, self._kubelet_client_ca = kubelet_ca, kubelet_client_ca
        self.kubelet_server: KubeletServer | None = None
        self.kubelet_pki: KubeletPKI | None = None
        # in-cluster clients (process pods) need HTTPS: by default only the process kubelet
        self._secure_port = secure_port if secure_port is not None or kubelet != "process" else 0
        self._authorization_mode = authorization_mode
        self._insecure = insecure
        # process kubelet: images run as local commands (declared by installed distributions,
        # then the ones given here)
        found = discover() if discover_images and kubelet == "process" else {}
        self.images = ImageTable(found).merged(images or {})
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.server: APIServer | None = None
        self._client: ClusterClient | None = None
        self.kubelets: list[Kubelet] = []
        self.scheduler: Scheduler | None = None
        self.hosts: ClusterHosts | None = None
        self.ips = IPAllocator()
        self.kubeconfig = ""

    # -- properties ----------------------------------------------------------------

    @property
    def url(self) -> str:
        if self.external is not None:
            return self.external.url
        return self._server().url

    @property
    def registry(self) -> Registry:
        """The emulator's registry (the emulated control plane only)."""
        return self._server().registry

    @property
    def client(self) -> ClusterClient:
        """The client every agent of this cluster uses, on either control plane."""
        if self._client is None:
            raise RuntimeError("the local cluster has not been started")
        return self._client

    def _server(self) -> APIServer:
        """The emulator, once ``start`` made it."""
        if self.external is not None:
            raise RuntimeError("this local cluster runs on an external API server: no emulator")
        if self.server is None:
            raise RuntimeError("the local cluster has not been started")
        return self.server

    @property
    def kubelet_port(self) -> int | None:
        """The port of the kubelets' HTTPS server (every node's kubeletEndpoint), if it runs."""
        return None if self.kubelet_server is None else self.kubelet_server.port

    @property
    def node_names(self) -> list[str]:
        return [k.node.name for k in self.kubelets]

    # -- lifecycle ----------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> LocalCluster:
        try:
            if self.control_plane == "real":
                self.external = self._start_real_control_plane()
            if self.external is not None:
                self._client = self.external.client(AGENTS_USER_AGENT)
                self.kubeconfig = self.external.kubeconfig
            else:
                self._start_emulator()
                install_crds(self.client, self._crds)
            self._start_components()
        except BaseException:
            self.stop()
            raise
        logger.info(
            "local cluster at %s: %d node(s), kubelet=%s, dns=%s",
            self.url,
            self.node_count,
            self.kubelet_mode,
            self.dns_mode,
        )
        return self

    def _start_real_control_plane(self) -> ExternalAPIServer:
        """etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built on first
        need; the agents attach to it as to any external API server."""
        self.real_plane = plane = RealControlPlane(
            state_dir=os.path.join(self.state_dir, "control-plane"),
            feature_gates=REAL_FEATURE_GATES,
            runtime_config=REAL_RUNTIME_CONFIG,
            extra_apiserver_args=self._apiserver_args,
            before_controllers=self._install_crds_on_real,
        )
        plane.start()
        kubeconfig = self._kubeconfig_path
        shutil.copyfile(plane.kubeconfig, kubeconfig)
        os.chmod(kubeconfig, 0o600)
        # kube-apiserver verifies the kubelets' serving certificate with the plane's CA and
        # presents a client certificate that CA signed: the kubelets' server uses both
        ca = plane.certificate_authority()
        self._kubelet_ca = CertificateAuthority(KeyPair(ca.cert, ca.key), os.path.dirname(ca.cert))
        self._kubelet_client_ca = ca.cert
        port = int(urlsplit(plane.url).port or 443)
        return ExternalAPIServer(
            plane.url,
            kubeconfig,
            token=plane.admin_token,
            ca_file=plane.ca_file,
            in_cluster=InClusterAPI(urlsplit(plane.url).hostname or "127.0.0.1", port),
        )

    def _install_crds_on_real(self, plane: RealControlPlane) -> None:
        client = HttpClient(plane.url, token=plane.admin_token, ca_file=plane.ca_file)
        try:
            install_crds(client, self._crds)
        finally:
            client.close()

    def _start_emulator(self) -> None:
        self.server = server = APIServer(
            host=self._host,
            port=self._port,
            watch_history=self._watch_history,
            tls=self._tls,
            token=self._token,
            secure_port=self._secure_port,
            authorization_mode=self._authorization_mode,
            insecure=self._insecure,
            admission_plugins=("ServiceAccount",),
        )
        server.start()
        if self._agents_over_http:
            self._client = HttpClient(
                server.url,
                token=server.admin_token,
                ca_file=server.cert_file,
                user_agent=AGENTS_USER_AGENT,
            )
        else:
            self._client = InProcessClient(server.registry, server.auth.tokens)
        self.kubeconfig = write_kubeconfig(
            self._kubeconfig_path, server.url, server.admin_token, server.cert_file
        )

    def _start_components(self) -> None:
        client = self.client
        if self._run_endpoints:
            self._threads += EndpointsController(client).start(self._stop)
        if self._run_controllers:
            self._start_namespace_objects(client)
            self._threads += ReplicaSetController(client).start(self._stop)
            self._threads += DeploymentController(client).start(self._stop)
            self._threads += ClusterRoleAggregation(client).start(self._stop)
            self._threads += PodGroupProtection(client).start(self._stop)
            self._threads += DisruptionController(client).start(self._stop)
        if self.kubelet_mode == "process":
            self.dns_mode = resolve_mode(self._dns_request)
            if self.dns_mode != "none":
                self.hosts = ClusterHosts(
                    client, os.path.join(self.state_dir, "hosts"), self._domains
                )
                self._threads += self.hosts.start(self._stop)
        configs = self._node_configs(self._nodes_requested) if self.node_count else []
        if configs and self._kubelet_server_wanted:
            port = self._start_kubelet_server()
            for config in configs:
                config.kubelet_port = port
        in_cluster = self._in_cluster_api() if self.kubelet_mode == "process" else None
        for config in configs:
            kubelet = self._new_kubelet(client, config, in_cluster)
            self._threads += kubelet.start(self._stop)
            self.kubelets.append(kubelet)
        for kubelet in self.kubelets:
            kubelet.wait_for_sync(30)
        ledger = NodeLedger(client)
        if self._run_scheduler:
            self.scheduler = Scheduler(client, ledger=ledger)
            self.scheduler.start(self._stop)
        flavours, confs, period = self._batch
        if flavours:
            from localcluster.batchscheduler.bootstrap import start_batch_schedulers

            self.batch_schedulers, threads = start_batch_schedulers(
                client, ledger, flavours, confs, period, self._stop
            )
            self._threads += threads
        if self._coscheduling_args is not None:
            from localcluster.coscheduling.bootstrap import start_scheduler_plugins

            self.coscheduling, self.podgroup_controller, threads = start_scheduler_plugins(
                client, ledger, self._coscheduling_args, self._stop
            )
            self._threads += threads
        if self.server is not None:
            self.server.register_log_provider(self._logs)

    def _start_namespace_objects(self, client: ClusterClient) -> None:
        controllers = [default_service_accounts(client)]
        cert_file = self.server.cert_file if self.server is not None else None
        if cert_file:
            controllers.append(root_ca_publisher(client, cert_file))
        for controller in controllers:
            self._threads += controller.start(self._stop)
        for controller in controllers:
            controller.wait_ready(30)

    def _start_kubelet_server(self) -> int:
        """Make the certificates and start the kubelets' HTTPS server; its port."""
        directory = os.path.join(self.state_dir, "kubelet-pki")
        ca = self._kubelet_ca or CertificateAuthority.create(directory, "localcluster-kubelet-ca")
        serving = ca.issue(
            "kubelet-serving",
            "localcluster-kubelet",
            ips=("127.0.0.1",),
            dns_names=("localhost", *(c.name for c in self._node_configs(self._nodes_requested))),
        )
        client = None
        client_ca = self._kubelet_client_ca
        if client_ca is None:
            client_ca = ca.cert_file
            client = ca.issue(
                "kubelet-client",
                "kube-apiserver-kubelet-client",
                organizations=("system:masters",),
                client=True,
            )
        self.kubelet_pki = KubeletPKI(ca.cert_file, serving, client_ca, client)
        self.kubelet_server = KubeletServer(
            self._container_logs, serving.cert_file, serving.key_file, client_ca
        ).start()
        return self.kubelet_server.port

    def _in_cluster_api(self) -> InClusterAPI | None:
        """Where process pods reach the API server: configured, or as it advertises itself."""
        if self.external is not None and self.external.in_cluster is not None:
            return self.external.in_cluster
        try:
            endpoints = self.client.get(("", "v1", "endpoints"), "default", "kubernetes")
        except StatusError as err:
            if err.code != 404:
                raise
            endpoints = {}
        api = from_endpoints(endpoints)
        if api is None and self.external is not None:
            url = urlsplit(self.external.url)
            api = InClusterAPI(url.hostname or "127.0.0.1", url.port or 443)
        return api

    def _node_configs(self, nodes: int) -> list[NodeConfig]:
        spec = self.node_spec
        pools = self.node_pools or [
            NodePool(
                "localcluster-node", nodes, spec.cpu, spec.memory, spec.gpus, spec.pods, spec.labels
            )
        ]
        return [
            NodeConfig(
                name=name,
                cpu=pool.cpu,
                memory=pool.memory,
                gpus=pool.gpus,
                pods=pool.pods,
                labels=dict(pool.labels),
                runtime=self.kubelet_mode,
                taints=[dict(t) for t in pool.taints],
            )
            for pool in pools
            for name in pool.node_names()
        ]

    def _new_kubelet(
        self, client: ClusterClient, config: NodeConfig, in_cluster: InClusterAPI | None
    ) -> Kubelet:
        timers = TimerQueue()
        runtime: ContainerRuntime
        if self.kubelet_mode == "simulated":
            runtime = SimulatedRuntime(
                timers, self.timing.start_delay, self.timing.default_run_seconds
            )
        else:
            runtime = ProcessRuntime(
                client,
                os.path.join(self.state_dir, config.name),
                timers,
                hosts=self.hosts,
                dns_mode=self.dns_mode,
                cluster_domain=self._domains[0] if self._domains else "cluster.local",
                images=self.images,
                api=in_cluster,
            )
        return Kubelet(
            client,
            config,
            runtime,
            self.ips,
            timers,
            restart_delay=self.timing.restart_delay,
            max_restart_delay=self.timing.max_restart_delay,
        )

    def stop(self) -> None:
        """Kill every pod process, stop all components and the server. Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        for kubelet in self.kubelets:
            try:
                kubelet.shutdown()
            except Exception:  # noqa: BLE001 - keep stopping the rest
                logger.exception("stopping kubelet %s failed", kubelet.node.name)
        if self.scheduler is not None:
            self.scheduler.join(2)
        for batch in self.batch_schedulers.values():
            batch.join(2)
        if self.coscheduling is not None:
            self.coscheduling.join(2)
        if self.kubelet_server is not None:
            self.kubelet_server.stop()
        for thread in self._threads:
            thread.join(2)
        self._threads = []
        if isinstance(self._client, HttpClient):
            self._client.close()
        if self.server is not None:
            self.server.stop()
        if self.real_plane is not None:
            self.real_plane.stop()
        if self._own_state_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    # -- logs ---------------------------------------------------------------------

    def _logs(
        self,
        namespace: str,
        pod: str,
        container: str | None,
        follow: bool = False,
        tail_lines: int | None = None,
        limit_bytes: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
        stop_event: threading.Event | None = None,
    ) -> Iterator[bytes]:
        request = LogRequest(follow, tail_lines, limit_bytes, previous, stop_event)
        for kubelet in self.kubelets:
            try:
                stream = kubelet.logs(namespace, pod, container, request)
            except LogUnavailable:
                return iter(())  # the emulator's pods/log answers an empty log
            if stream is not None:
                return stream
        return iter(())

    def _container_logs(
        self, namespace: str, pod: str, container: str, request: LogRequest
    ) -> Iterator[bytes]:
        """What the kubelets' HTTPS server serves (``GET /containerLogs/...``)."""
        for kubelet in self.kubelets:
            names = kubelet.container_names(namespace, pod)
            if names is None:
                continue
            if container not in names:
                raise LogNotFound(f'container "{container}" not found in pod "{pod}"')
            return kubelet.logs(namespace, pod, container, request) or iter(())
        raise LogNotFound(f'pod "{namespace}/{pod}" does not exist on this node')

    def process_pids(self) -> list[int]:
        """PIDs of every live container process (process kubelet only)."""
        pids: list[int] = []
        for kubelet in self.kubelets:
            if isinstance(kubelet.runtime, ProcessRuntime):
                pids += kubelet.runtime.running_pids()
        return pids
