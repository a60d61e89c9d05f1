"""Scheduler plugins: each registers hooks on a session when it opens and may act at close.

``build`` instantiates a configured plugin; the names are upstream's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from localcluster.batchscheduler.conf import PluginOption
from localcluster.batchscheduler.plugins.conformance import ConformancePlugin
from localcluster.batchscheduler.plugins.drf import DrfPlugin
from localcluster.batchscheduler.plugins.gang import GangPlugin
from localcluster.batchscheduler.plugins.nodeorder import NodeOrderPlugin
from localcluster.batchscheduler.plugins.predicates import PredicatesPlugin
from localcluster.batchscheduler.plugins.priority import PriorityPlugin
from localcluster.batchscheduler.plugins.proportion import ProportionPlugin

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session


class Plugin(Protocol):
    name: str

    def on_open(self, ssn: Session) -> None: ...

    def on_close(self, ssn: Session) -> None: ...


BUILDERS = {
    cls.name: cls
    for cls in (
        PriorityPlugin,
        GangPlugin,
        ConformancePlugin,
        DrfPlugin,
        ProportionPlugin,
        PredicatesPlugin,
        NodeOrderPlugin,
    )
}


def build(option: PluginOption) -> Plugin:
    return BUILDERS[option.name](option.arguments)
