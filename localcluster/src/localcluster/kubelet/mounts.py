"""A pod's private mount namespace: bind mounts over host paths, seen only by the pod.

Process pods run under ``unshare --mount --uts`` (root only; ``dns.probe_mount_namespace``
checks once) with a small shell wrapper that bind-mounts each ``Bind`` (read-only ones are
remounted read-only), sets the pod's hostname and execs the container's command. Mounts made
there never reach the host, so two pods can each see their own file at the same path, as
containers do: the cluster hosts file over ``/etc/hosts`` (``dns``) and the service-account
token directory over ``/var/run/secrets/kubernetes.io/serviceaccount`` (``volumes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Bind:
    source: str
    target: str
    read_only: bool = False


def namespace_prefix(binds: Sequence[Bind], hostname: str) -> list[str]:
    """The argv prefix that runs the rest of an argv inside a private mount namespace."""
    steps = []
    args = [hostname]  # $0
    for bind in binds:
        src, dst = len(args), len(args) + 1
        args += [bind.source, bind.target]
        step = f'mount --bind "${{{src}}}" "${{{dst}}}"'
        if bind.read_only:
            step += f' && mount -o remount,bind,ro "${{{dst}}}"'
        steps.append(step)
    steps += ['{ hostname "$0" 2>/dev/null || true; }', f"shift {len(args) - 1}", 'exec "$@"']
    script = " && ".join(steps)
    return [
        "unshare",
        "--mount",
        "--uts",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        script,
        *args,
    ]
