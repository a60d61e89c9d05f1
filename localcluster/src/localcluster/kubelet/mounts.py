"""A pod's private mount namespace: bind mounts over host paths, seen only by the pod.

Process pods run under ``unshare --mount --uts`` (root only; ``dns.probe_mount_namespace``
checks once) with a small shell wrapper that bind-mounts each ``Bind`` (read-only ones are
remounted read-only), sets the pod's hostname and execs the container's command. Mounts made
there never reach the host, so two pods can each see their own file at the same path, as
containers do: the cluster hosts file over ``/etc/hosts`` (``dns``) and the service-account
token directory over ``/var/run/secrets/kubernetes.io/serviceaccount`` (``volumes``).

A bind needs its target to exist, and making a missing one on the host would change the host
for every program on it (a ``/var/run/secrets/kubernetes.io/serviceaccount`` left behind makes
other programs believe they run in a pod). So a missing target is made inside the namespace:
its nearest existing ancestor is covered, for the pod only, by an overlay whose lower layer is
the ancestor itself (the pod still sees everything there) and whose upper layer lives on a
tmpfs mounted under the pod's own directory; the target is created in that overlay, then bound.
Nothing outside the cluster's state directory changes. Overlays need the kernel's overlayfs
(:func:`probe_overlay` checks once); without it a missing target is skipped with a warning.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Bind:
    source: str
    target: str
    read_only: bool = False


def existing_ancestor(path: str) -> str:
    """The nearest ancestor of ``path`` that exists, symbolic links resolved."""
    current = os.path.dirname(os.path.normpath(path))
    while not os.path.exists(current):
        current = os.path.dirname(current)
    return os.path.realpath(current)


def namespace_prefix(binds: Sequence[Bind], hostname: str, scratch: str = "") -> list[str]:
    """The argv prefix that runs the rest of an argv inside a private mount namespace.

    Targets that do not exist are made in overlays whose writable layers go on a tmpfs at
    ``scratch`` (a directory of the pod, in the state directory); without ``scratch`` every
    target must exist."""
    steps: list[str] = []
    args = [hostname]  # $0

    def arg(value: str) -> str:
        args.append(value)
        return f'"${{{len(args) - 1}}}"'

    missing = [b for b in binds if not os.path.lexists(b.target)]
    if missing:
        if not scratch:
            raise ValueError(f"no scratch directory for the missing targets {missing}")
        steps.append(f"mount -t tmpfs -o mode=0700 localcluster-scratch {arg(scratch)}")
        ancestors = sorted({existing_ancestor(b.target) for b in missing}, key=len)
        for n, ancestor in enumerate(ancestors):
            upper, work = f"{scratch}/{n}/upper", f"{scratch}/{n}/work"
            options = f"lowerdir={ancestor},upperdir={upper},workdir={work}"
            steps.append(
                f"mkdir -p {arg(upper)} {arg(work)} && "
                f"mount -t overlay localcluster-overlay -o {arg(options)} {arg(ancestor)}"
            )
        for bind in missing:
            target = arg(bind.target)
            if os.path.isdir(bind.source):
                steps.append(f"mkdir -p {target}")
            else:
                steps.append(f'mkdir -p "$(dirname {target})" && touch {target}')
    for bind in binds:
        target = arg(bind.target)
        step = f"mount --bind {arg(bind.source)} {target}"
        if bind.read_only:
            step += f" && mount -o remount,bind,ro {target}"
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


_probe_lock = threading.Lock()
_overlay: bool | None = None


def probe_overlay() -> bool:
    """True when a private mount namespace can make a missing mount target in an overlay
    (the kernel has overlayfs and lets us mount it); checked once."""
    global _overlay
    with _probe_lock:
        if _overlay is not None:
            return _overlay
        with tempfile.TemporaryDirectory(prefix="localcluster-overlay-probe-") as base:
            lower, scratch, source = (os.path.join(base, d) for d in ("lower", "scratch", "src"))
            for directory in (lower, scratch, source):
                os.makedirs(directory)
            target = os.path.join(lower, "made", "here")
            argv = namespace_prefix([Bind(source, target)], "probe", scratch)
            try:
                result = subprocess.run(
                    [*argv, "test", "-d", target], capture_output=True, timeout=10, check=False
                )
                _overlay = result.returncode == 0 and not os.path.exists(target)
            except (OSError, subprocess.SubprocessError):
                _overlay = False
        logger.info("overlay mount targets %s", "available" if _overlay else "unavailable")
        return _overlay
