"""kube-apiserver's audit log as a request counter: on the real control plane, what the
emulator's per-client request counts (``apiserver_request_total``'s ``client`` label) tell.

``AuditLog(directory)`` writes a policy recording every request at ``Metadata`` level (a watch
when it starts, as well as when it ends: each request counts once, by its audit ID);
``apiserver_args`` are the flags that turn it on
(``LocalCluster(control_plane="real", apiserver_args=...)``); ``responses`` counts the logged
requests of one client (the User-Agent up to its first ``/``, as the emulator counts them) by
code, verb and resource (``tfjobs/status`` for a subresource); ``decisions_of`` counts one
user's authorization decisions as the emulator's authorizer does.
"""

from __future__ import annotations

import json
from pathlib import Path

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
"""


class AuditLog:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.policy = directory / "audit-policy.yaml"
        self.policy.write_text(POLICY)
        self.path = directory / "audit.log"

    @property
    def apiserver_args(self) -> tuple[str, ...]:
        return (
            f"--audit-policy-file={self.policy}",
            f"--audit-log-path={self.path}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
            "--audit-log-maxsize=0",
        )

    def events(self) -> list[dict]:
        """One event per request (its first logged stage)."""
        if not self.path.exists():
            return []
        seen: dict[str, dict] = {}
        for line in self.path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line being written
            seen.setdefault(event.get("auditID", ""), event)
        return list(seen.values())

    def responses(self, client: str, code: int, verb: str = "", resource: str = "") -> int:
        """How many logged requests of ``client`` got ``code`` (only those of ``verb`` on
        ``resource`` when given)."""
        count = 0
        for event in self.events():
            if (event.get("userAgent") or "").split("/", 1)[0].strip() != client:
                continue
            if (event.get("responseStatus") or {}).get("code") != code:
                continue
            if verb in ("", event.get("verb")) and resource in ("", _resource(event)):
                count += 1
        return count

    def decisions_of(self, username: str) -> dict[tuple[str, str, str, bool], int]:
        """``(verb, group, resource, allowed) -> count`` of ``username``'s resource requests."""
        counts: dict[tuple[str, str, str, bool], int] = {}
        for event in self.events():
            decision = (event.get("annotations") or {}).get("authorization.k8s.io/decision")
            ref = event.get("objectRef")
            if (event.get("user") or {}).get("username") != username or not ref or not decision:
                continue
            key = (event["verb"], ref.get("apiGroup", ""), _resource(event), decision == "allow")
            counts[key] = counts.get(key, 0) + 1
        return counts


def _resource(event: dict) -> str:
    ref = event.get("objectRef") or {}
    resource = str(ref.get("resource", ""))
    return f"{resource}/{ref['subresource']}" if ref.get("subresource") else resource
