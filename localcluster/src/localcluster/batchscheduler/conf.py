"""The scheduler configuration file: actions, plugin tiers, per-action arguments.

Same YAML shape as kube-batch's and Volcano's. As upstream: an unknown action is a startup
error naming it, an unknown plugin is logged and skipped, an unreadable file falls back to
the built-in default. Per-plugin hook switches accept both spellings, Volcano's
``enableJobOrder: false`` and kube-batch's ``disableJobOrder: true``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from localcluster.batchscheduler.flavours import Flavour

logger = logging.getLogger(__name__)

HOOKS = (
    "JobOrder",
    "QueueOrder",
    "TaskOrder",
    "JobReady",
    "JobPipelined",
    "Predicate",
    "NodeOrder",
    "Preemptable",
    "Reclaimable",
    "Overused",
)
PLUGINS = ("priority", "gang", "conformance", "drf", "proportion", "predicates", "nodeorder")
ERROR_CACHE_MODES = ("off", "task-spec", "task-spec-nonempty")


class ConfError(ValueError):
    """The configuration cannot be used (unknown action, bad cache mode)."""


@dataclass(frozen=True)
class PluginOption:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()

    def enabled(self, hook: str) -> bool:
        return hook not in self.disabled


@dataclass(frozen=True)
class SchedulerConf:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    action_arguments: dict[str, dict[str, Any]]
    error_cache: str

    def plugin_names(self) -> list[str]:
        return [p.name for tier in self.tiers for p in tier]


def _plugin(entry: dict[str, Any]) -> PluginOption | None:
    name = str(entry.get("name") or "")
    if name not in PLUGINS:
        logger.warning("unknown batch-scheduler plugin %r: skipped", name)
        return None
    disabled = set()
    for hook in HOOKS:
        if entry.get(f"enable{hook}") is False or entry.get(f"disable{hook}") is True:
            disabled.add(hook)
    arguments = {str(k): v for k, v in (entry.get("arguments") or {}).items()}
    return PluginOption(name, arguments, frozenset(disabled))


def _error_cache(arguments: dict[str, Any], flavour: Flavour) -> str:
    if arguments.get("predicateErrorCacheEnable") is False:
        return "off"
    mode = str(arguments.get("predicateErrorCache") or flavour.default_error_cache)
    if mode not in ERROR_CACHE_MODES:
        raise ConfError(f"predicateErrorCache must be one of {ERROR_CACHE_MODES}, not {mode!r}")
    return mode


def parse_conf(data: dict[str, Any], flavour: Flavour) -> SchedulerConf:
    """A configuration from its parsed YAML; raises ConfError for an unusable one."""
    actions = tuple(a.strip() for a in str(data.get("actions") or "").split(",") if a.strip())
    for action in actions:
        if action not in flavour.actions:
            raise ConfError(f"failed to find action {action!r} for {flavour.name}")
    tiers = []
    for tier in data.get("tiers") or []:
        plugins = [_plugin(entry) for entry in (tier or {}).get("plugins") or []]
        tiers.append(tuple(p for p in plugins if p is not None))
    arguments: dict[str, dict[str, Any]] = {}
    if flavour.volcano:  # kube-batch v0.4.2 has no configurations section
        for entry in data.get("configurations") or []:
            arguments[str(entry.get("name"))] = dict(entry.get("arguments") or {})
    return SchedulerConf(
        actions, tuple(tiers), arguments, _error_cache(arguments.get("allocate", {}), flavour)
    )


def default_conf(flavour: Flavour) -> SchedulerConf:
    return parse_conf(yaml.safe_load(flavour.default_conf), flavour)


def load_conf(source: str | dict[str, Any] | None, flavour: Flavour) -> SchedulerConf:
    """``source``: None (built-in), a dict, a file path, or YAML text."""
    if source is None:
        return default_conf(flavour)
    if isinstance(source, dict):
        return parse_conf(source, flavour)
    text = source
    if "\n" not in source and (": " not in source or os.path.exists(source)):  # a path
        try:
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as err:
            logger.error(
                "cannot read %s configuration %s (%s); using the default", flavour.name, source, err
            )
            return default_conf(flavour)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        logger.error("invalid %s configuration (%s); using the default", flavour.name, err)
        return default_conf(flavour)
    if not isinstance(data, dict):
        logger.error("%s configuration is not a mapping; using the default", flavour.name)
        return default_conf(flavour)
    return parse_conf(data, flavour)
