"""The ClusterRole aggregation controller: ``aggregationRule`` roles collect others' rules.

As kube-controller-manager's: a ClusterRole with ``aggregationRule.clusterRoleSelectors`` gets
as its ``rules`` the rules of every other ClusterRole whose labels match any selector, in the
order of those roles' names, each distinct rule once; it is rewritten whenever a matching role
appears, changes or goes away. (The default ``admin``/``edit``/``view`` roles use this; here it
serves user-defined aggregates, e.g. ``rbac.authorization.k8s.io/aggregate-to-<role>`` labels.)
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from localcluster.apimachinery.selectors import label_selector_matches
from localcluster.client.api import ClusterClient
from localcluster.client.informer import Informer, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker

CLUSTER_ROLES = ("rbac.authorization.k8s.io", "v1", "clusterroles")


def aggregated_rules(role: dict[str, Any], roles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    name = role["metadata"]["name"]
    rules: list[dict[str, Any]] = []
    for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
        labels = other["metadata"].get("labels") or {}
        if other["metadata"]["name"] == name or not any(
            label_selector_matches(s, labels) for s in selectors
        ):
            continue
        rules += [r for r in other.get("rules") or [] if r not in rules]
    return rules


class ClusterRoleAggregation:
    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._queue = KeyQueue()
        self._roles = Informer(client, CLUSTER_ROLES, self._on_role)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._roles,), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, "clusterrole-aggregation"))
        return threads

    def _on_role(self, _event: str, _role: dict[str, Any], _old: dict[str, Any] | None) -> None:
        for role in self._roles.items():  # any change may feed any aggregate
            if role.get("aggregationRule"):
                self._queue.add(role["metadata"]["name"])

    def sync(self, name: str) -> None:
        role = self._roles.get(name)
        if role is None or not role.get("aggregationRule"):
            return
        rules = aggregated_rules(role, self._roles.items())
        if rules == (role.get("rules") or []):
            return
        current = self._client.get(CLUSTER_ROLES, None, name)
        updated = copy.deepcopy(current)
        updated["rules"] = rules
        self._client.update(CLUSTER_ROLES, None, name, updated)
