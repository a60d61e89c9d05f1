"""kube-apiserver's audit log as a request counter: on the real control plane, what the
emulator's per-client request counts (``apiserver_request_total``'s ``client`` label) tell.

``AuditLog(directory)`` writes a policy recording every request at ``Metadata`` level once it
completes; ``apiserver_args`` are the flags that turn it on
(``LocalCluster(control_plane="real", apiserver_args=...)``); ``responses`` counts the logged
requests of one client (the User-Agent up to its first ``/``, as the emulator counts them) by
code, verb and resource (``tfjobs/status`` for a subresource).
"""

from __future__ import annotations

import json
from pathlib import Path

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
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

    def responses(self, client: str, code: int, verb: str = "", resource: str = "") -> int:
        """How many logged requests of ``client`` got ``code`` (only those of ``verb`` on
        ``resource`` when given)."""
        if not self.path.exists():
            return 0
        count = 0
        for line in self.path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line being written
            if (event.get("userAgent") or "").split("/", 1)[0].strip() != client:
                continue
            if (event.get("responseStatus") or {}).get("code") != code:
                continue
            ref = event.get("objectRef") or {}
            res = ref.get("resource", "")
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            if verb in ("", event.get("verb")) and resource in ("", res):
                count += 1
        return count
