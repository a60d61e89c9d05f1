"""Images the process kubelet can run: an image reference -> a local command.

The process kubelet has no container runtime, so an image means nothing to it unless this
table maps it to what the image would run. A ``LocalImage`` is the part of an image a
container needs here: its ``ENTRYPOINT`` and ``CMD`` and the directories its ``PATH`` starts
with. Command and arguments then follow Kubernetes' rules: ``command`` replaces the entrypoint,
``args`` replace the image's ``CMD`` (which is dropped whenever ``command`` is given), and a
relative executable is looked up in the image's ``PATH`` first. Containers of images not in the
table run only with a ``command``, looked up in the host's ``PATH``, as before.

References match by repository, with or without a tag or digest: ``kubeflow/tf-operator-py``
in the table matches ``kubeflow/tf-operator-py:v0.5.3.post1`` and
``docker.io/kubeflow/tf-operator-py@sha256:...``; an entry with a tag matches only that tag.

``discover()`` builds the table from the ``localcluster.images`` entry-point group of the
installed distributions, read as metadata (nothing is imported): an entry
``"<repository>" = "<module>:<function>"`` names the console script of the same distribution
with that target, so the image runs that script from this environment's scripts directory.
The operator's distribution declares its image this way, so ``kubectl apply -k manifests/...``
on any local cluster started from the project's venv runs the real operator, and the local
cluster still knows nothing about it.
"""

from __future__ import annotations

import logging
import os
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "localcluster.images"
_DEFAULT_REGISTRY_PREFIXES = ("docker.io/library/", "docker.io/", "index.docker.io/")


@dataclass(frozen=True)
class LocalImage:
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    path: tuple[str, ...] = ()


def _split(reference: str) -> tuple[str, str]:
    """(repository, tag or digest) of an image reference, default registry prefix dropped."""
    ref = reference.strip()
    for prefix in _DEFAULT_REGISTRY_PREFIXES:
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            break
    if "@" in ref:
        repo, _, digest = ref.partition("@")
        return repo, "@" + digest
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, tag = ref.rpartition(":")
        return repo, tag
    return ref, ""


class ImageTable:
    def __init__(self, images: Mapping[str, LocalImage] | None = None) -> None:
        self._images = {_split(ref): image for ref, image in (images or {}).items()}

    def __bool__(self) -> bool:
        return bool(self._images)

    def lookup(self, reference: str) -> LocalImage | None:
        repo, tag = _split(reference)
        return self._images.get((repo, tag)) or self._images.get((repo, ""))

    def merged(self, other: Mapping[str, LocalImage]) -> ImageTable:
        """This table with ``other``'s entries added (``other`` wins)."""
        table = ImageTable()
        table._images = {**self._images, **ImageTable(other)._images}
        return table


def container_command(
    spec: dict[str, Any], image: LocalImage | None
) -> tuple[list[str], list[str]]:
    """(command, args) a container runs: its own, else the image's entrypoint and cmd."""
    command = list(spec.get("command") or [])
    args = list(spec.get("args") or [])
    if image is None:
        return command, args
    if not command:
        command = list(image.entrypoint)
        if not args:
            args = list(image.cmd)
    return command, args


def discover() -> dict[str, LocalImage]:
    """Images declared by installed distributions (see module docstring)."""
    scripts_dir = sysconfig.get_path("scripts")
    found: dict[str, LocalImage] = {}
    for dist in metadata.distributions():
        declared = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
        if not declared:
            continue
        scripts = {ep.value: ep.name for ep in dist.entry_points if ep.group == "console_scripts"}
        for ep in declared:
            script = scripts.get(ep.value)
            if script is None:
                logger.warning("image %s: no console script %s in %s", ep.name, ep.value, dist.name)
                continue
            found[ep.name] = LocalImage(
                entrypoint=(os.path.join(scripts_dir, script),), path=(scripts_dir,)
            )
    return found


def parse_image_option(text: str) -> tuple[str, LocalImage]:
    """``REF=EXECUTABLE [ARG...]`` (the CLI's ``--image``) -> an entry whose entrypoint is the
    executable (and its arguments) and whose PATH starts with the executable's directory."""
    ref, sep, command = text.partition("=")
    argv = command.split()
    if not sep or not ref.strip() or not argv:
        raise ValueError(f"expected IMAGE=EXECUTABLE, got {text!r}")
    directory = os.path.dirname(os.path.abspath(argv[0])) if "/" in argv[0] else ""
    return ref.strip(), LocalImage(entrypoint=tuple(argv), path=(directory,) if directory else ())
