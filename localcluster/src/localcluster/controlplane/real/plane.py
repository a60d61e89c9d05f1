"""``RealControlPlane``: etcd, kube-apiserver, kube-controller-manager and kube-scheduler.

Started in that order, each waited for on its health endpoint; a start that fails part-way
stops what it had started. Every process binds 127.0.0.1 on a port the kernel picked, keeps
its data and logs in the plane's state directory (removed on ``stop`` unless the caller gave
it), and runs in its own process group so ``stop`` leaves nothing behind.

kube-apiserver runs as a production cluster's does, on loopback: token authentication (an
admin token in ``system:masters``, one identity each for kube-controller-manager and
kube-scheduler, which the bootstrap RBAC policy knows), ``Node,RBAC`` authorisation, the
default admission plugins plus NodeRestriction, service-account tokens signed by the plane's
key. kube-controller-manager runs all its default controllers (garbage collector, namespaces,
service accounts and tokens, ReplicaSet, Deployment, endpoints and EndpointSlices, node
lifecycle, ...). Nodes and pods are not its business: agents attach over HTTP with
``kubeconfig`` (``localcluster.cluster`` does that).
"""

from __future__ import annotations

import logging
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from localcluster.controlplane.real.build import Binaries, Progress, ensure_binaries
from localcluster.controlplane.real.pki import SERVICE_CLUSTER_IP_RANGE, ControlPlanePKI, KeyPair
from localcluster.controlplane.real.process import (
    PROBE_INTERVAL,
    HealthProbe,
    ManagedProcess,
    ProcessFailed,
    free_port,
)

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
# Seconds each process gets to answer its health endpoint (kube-apiserver installs its
# bootstrap RBAC policy and priority levels before /readyz passes: several seconds on 2 cores).
START_TIMEOUT = 120.0


@dataclass(frozen=True)
class Identity:
    """A user of the token file: name, uid and groups."""

    user: str
    groups: tuple[str, ...] = ()
    token: str = field(default_factory=lambda: secrets.token_hex(24))


@dataclass
class RealControlPlane:
    """The four processes on loopback; ``start``/``stop`` (or use it as a context manager)."""

    state_dir: str | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    runtime_config: Mapping[str, str] = field(default_factory=dict)
    extra_apiserver_args: list[str] = field(default_factory=list)
    progress: Progress | None = None
    binaries: Binaries | None = None
    # Called once kube-apiserver serves and before kube-controller-manager starts: what the
    # cluster should hold from the controllers' first moment (LocalCluster's ``crds``).
    before_controllers: Callable[[RealControlPlane], None] | None = None
    url: str = ""
    admin: Identity = field(
        default_factory=lambda: Identity("localcluster-admin", ("system:masters",))
    )
    pki: ControlPlanePKI | None = None
    _processes: list[ManagedProcess] = field(default_factory=list)
    _own_state_dir: bool = False
    _root: Path = Path()

    @property
    def version(self) -> str:
        return self._binaries().kubernetes_version

    @property
    def ca_file(self) -> str:
        return self._pki().ca.cert

    def certificate_authority(self) -> KeyPair:
        """The CA (certificate and key) that signed every certificate of the plane; kubelets
        serve with a certificate it signs, as kube-apiserver verifies them with it."""
        return self._pki().ca

    @property
    def admin_token(self) -> str:
        return self.admin.token

    @property
    def kubeconfig(self) -> str:
        return str(self._root / "admin.kubeconfig")

    def __enter__(self) -> RealControlPlane:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> RealControlPlane:
        self.binaries = self.binaries or ensure_binaries(self.progress)
        self._own_state_dir = self.state_dir is None
        self._root = Path(self.state_dir or tempfile.mkdtemp(prefix="real-control-plane-"))
        try:
            self.pki = ControlPlanePKI.make(self._root / "pki")
            etcd_url = self._start_etcd()
            self._start_apiserver(etcd_url)
            if self.before_controllers is not None:
                self.before_controllers(self)
            self._start_controller_manager()
            self._start_scheduler()
            self._wait_for_default_service_account()
        except BaseException:
            self.stop()
            raise
        logger.info("real control plane (Kubernetes %s) at %s", self.version, self.url)
        return self

    def stop(self) -> None:
        """Stop every process, newest first; remove the state directory if we made it."""
        while self._processes:
            process = self._processes.pop()
            try:
                process.stop()
            except Exception:  # noqa: BLE001 - keep stopping the rest
                logger.exception("stopping %s failed", process.name)
        if self._own_state_dir and self._root != Path():
            shutil.rmtree(self._root, ignore_errors=True)
            self._own_state_dir = False

    def pids(self) -> list[int]:
        return [p.pid for p in self._processes if p.pid is not None]

    def log_tail(self, name: str, lines: int = 40) -> str:
        for process in self._processes:
            if process.name == name:
                return process.log_tail(lines)
        return ""

    # -- the four processes ---------------------------------------------------------

    def _launch(self, name: str, argv: list[str], probe: HealthProbe) -> None:
        process = ManagedProcess(name, argv, self._root / f"{name}.log", probe)
        self._processes.append(process)
        process.start()
        process.wait_healthy(START_TIMEOUT)

    def _start_etcd(self) -> str:
        client, peer = free_port(HOST), free_port(HOST)
        client_url, peer_url = f"http://{HOST}:{client}", f"http://{HOST}:{peer}"
        self._launch(
            "etcd",
            [
                self._binaries().path("etcd"),
                "--name=localcluster",
                f"--data-dir={self._root / 'etcd'}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=localcluster={peer_url}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
            HealthProbe(f"{client_url}/health"),
        )
        return client_url

    def _start_apiserver(self, etcd_url: str) -> None:
        pki = self._pki()
        port = free_port(HOST)
        self.url = f"https://{HOST}:{port}"
        scheduler, controller_manager = self._component_identities()
        tokens = self._root / "tokens.csv"
        tokens.write_text(
            "".join(
                f'{i.token},{i.user},{i.user},"{",".join(i.groups)}"\n'
                for i in (self.admin, scheduler, controller_manager)
            )
        )
        tokens.chmod(0o600)
        args = [
            self._binaries().path("kube-apiserver"),
            f"--etcd-servers={etcd_url}",
            f"--bind-address={HOST}",
            f"--advertise-address={HOST}",
            f"--secure-port={port}",
            f"--tls-cert-file={pki.apiserver.cert}",
            f"--tls-private-key-file={pki.apiserver.key}",
            f"--client-ca-file={pki.ca.cert}",
            # the aggregation layer, as kubeadm sets it up (without it every component logs
            # that the request-header CA bundle is missing)
            f"--requestheader-client-ca-file={pki.ca.cert}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki.front_proxy_client.cert}",
            f"--proxy-client-key-file={pki.front_proxy_client.key}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki.service_account_public_key}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            # the `kubernetes` Service's endpoints would name 127.0.0.1, which Endpoints refuse;
            # in-cluster clients here are told the server's address directly
            "--endpoint-reconciler-type=none",
            f"--kubelet-client-certificate={pki.kubelet_client.cert}",
            f"--kubelet-client-key={pki.kubelet_client.key}",
            f"--kubelet-certificate-authority={pki.ca.cert}",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            "--allow-privileged=true",
            "--profiling=false",
            # on SIGTERM, end open watches (clients re-list elsewhere) instead of waiting for
            # them until the shutdown timeout: a client still watching would hold the stop
            "--shutdown-watch-termination-grace-period=1s",
            *self._gate_args(),
            *self.extra_apiserver_args,
        ]
        if self.runtime_config:
            args.append(
                "--runtime-config="
                + ",".join(f"{k}={v}" for k, v in sorted(self.runtime_config.items()))
            )
        self._launch(
            "kube-apiserver",
            args,
            HealthProbe(f"{self.url}/readyz", self.admin.token, pki.ca.cert),
        )
        self._write_kubeconfig(Path(self.kubeconfig), self.admin)
        self._write_kubeconfig(self._root / "kube-scheduler.kubeconfig", scheduler)
        self._write_kubeconfig(
            self._root / "kube-controller-manager.kubeconfig", controller_manager
        )

    def _start_controller_manager(self) -> None:
        pki = self._pki()
        port = free_port(HOST)
        kubeconfig = self._root / "kube-controller-manager.kubeconfig"
        self._launch(
            "kube-controller-manager",
            [
                self._binaries().path("kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                f"--bind-address={HOST}",
                f"--secure-port={port}",
                f"--cert-dir={self._root / 'kube-controller-manager-certs'}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                f"--service-account-private-key-file={pki.service_account_key}",
                f"--root-ca-file={pki.ca.cert}",
                f"--cluster-signing-cert-file={pki.ca.cert}",
                f"--cluster-signing-key-file={pki.ca.key}",
                f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                "--controllers=*",
                "--profiling=false",
                *self._gate_args(),
            ],
            HealthProbe(f"https://{HOST}:{port}/healthz"),
        )

    def _start_scheduler(self) -> None:
        port = free_port(HOST)
        kubeconfig = self._root / "kube-scheduler.kubeconfig"
        self._launch(
            "kube-scheduler",
            [
                self._binaries().path("kube-scheduler"),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                f"--bind-address={HOST}",
                f"--secure-port={port}",
                "--leader-elect=false",
                "--profiling=false",
                *self._gate_args(),
            ],
            HealthProbe(f"https://{HOST}:{port}/healthz"),
        )

    def _wait_for_default_service_account(self) -> None:
        """kube-controller-manager makes each namespace's ``default`` ServiceAccount a moment
        after it starts; until then ServiceAccount admission refuses every pod of the
        namespace. Ready means a pod can be created (kind waits for the same)."""
        probe = HealthProbe(
            f"{self.url}/api/v1/namespaces/default/serviceaccounts/default",
            self.admin.token,
            self.ca_file,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while not probe.ok():
            if time.monotonic() >= deadline:
                raise ProcessFailed(
                    "kube-controller-manager made no default ServiceAccount in "
                    f"{START_TIMEOUT:.0f} s:\n{self.log_tail('kube-controller-manager')}"
                )
            time.sleep(PROBE_INTERVAL)

    # -- helpers ------------------------------------------------------------------

    def _gate_args(self) -> list[str]:
        if not self.feature_gates:
            return []
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.feature_gates.items()))
        return [f"--feature-gates={gates}"]

    def _component_identities(self) -> tuple[Identity, Identity]:
        return Identity("system:kube-scheduler"), Identity(
            "system:kube-controller-manager", ("system:masters",)
        )

    def _write_kubeconfig(self, path: Path, identity: Identity) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "real",
                    "cluster": {"server": self.url, "certificate-authority": self.ca_file},
                }
            ],
            "users": [{"name": identity.user, "user": {"token": identity.token}}],
            "contexts": [{"name": "real", "context": {"cluster": "real", "user": identity.user}}],
            "current-context": "real",
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        path.chmod(0o600)

    def _binaries(self) -> Binaries:
        if self.binaries is None:
            raise RuntimeError("the real control plane has not been started")
        return self.binaries

    def _pki(self) -> ControlPlanePKI:
        if self.pki is None:
            raise RuntimeError("the real control plane has not been started")
        return self.pki
