"""Send the same HTTP requests to two API servers and compare what they answer.

A ``Backend`` is one server reached over plain HTTPS: its URL, the CA that signed its serving
certificate and the bearer tokens of the identities a sequence acts as (``admin`` always; a
sequence adds a service account's token with ``Backend.add_identity``). A ``Step`` is one
request: method, path, query, body (a dict or list is sent as JSON, ``bytes``/``str`` as
written), content type, headers and the identity it is sent as. ``Backend.send`` returns an
``Answer``: the status code, the body (parsed when it is JSON) and the ``Warning`` headers.
A sequence is a function of a ``Recorder``, which sends its steps to one backend and records
every answer normalised; ``compare`` runs a sequence on every backend at once and diffs the
records against the first backend's (kube-apiserver's).

A ``Normaliser`` makes two servers' answers comparable. It replaces what each server makes up
for itself and no client can choose:

- uids (any UUID-shaped string): by order of first appearance in the sequence (``<uid-1>``...),
  so an ownerReference still names the same object it named;
- an object's ``metadata.resourceVersion`` (and an event's object's): by order of first
  appearance (``<rv-1>``...), so a write that changed nothing still answers the version it had
  and a watch's events are still told apart; a list's ``metadata.resourceVersion`` is the
  store's newest revision, which on the real server also moves with its controllers' writes
  in other namespaces, so it is only ``<list-rv>``;
- timestamps (RFC 3339 strings): ``<time>``;
- ``metadata.managedFields``, left out (the emulator records apply's only: divergence D190);
- names a server generated from ``generateName``: the prefix and ``<suffix>``;
- the uids and the resourceVersion a 409's message quotes, the same way;
- a list's ``continue`` token (each server's own encoding): ``<continue>`` (a test that needs
  one reads it from the raw answer);
- a Service's allocated ``clusterIP``/``clusterIPs`` (two allocators on two ranges): ``<ip>``;
- the patched document a 422 on the field ``patch`` quotes (kube-apiserver's carries
  ``managedFields``, which the emulator records only for apply: divergence D190);
- the resourceVersions quoted in a 410's message (``too old resource version: A (B)``).

With ``DIFFERENTIAL_DUMP=<prefix>`` set, ``compare`` also writes each backend's whole record to
``<prefix>.<backend>.json``, for reading a difference beyond the diff's context.

Everything else is compared as served: status codes, kinds, reasons, messages, causes, field
order inside lists, defaults.
"""

from __future__ import annotations

import difflib
import http.client
import json
import os
import re
import ssl
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
UUID_IN_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
RV_IN_RECORD = re.compile(r"ResourceVersion in record \(\d+\)")
# a patch whose result does not decode: the 422 quotes the whole patched document, which on
# kube-apiserver includes managedFields (the emulator keeps them only for apply: D190)
PATCHED_DOCUMENT = re.compile(r'(patch: Invalid value: |^Invalid value: )"\{.*\}"(: )', re.S)
TOO_OLD = re.compile(r"too old resource version: \d+ \(\d+\)")
JSON = "application/json"


@dataclass(frozen=True)
class Step:
    """One request of a sequence."""

    method: str
    path: str
    body: Any = None
    content_type: str | None = None
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    as_user: str = "admin"


@dataclass
class Answer:
    status: int
    body: Any
    content_type: str = ""
    warnings: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass
class Backend:
    """One API server over HTTPS, with the tokens of the identities a sequence acts as."""

    name: str
    url: str
    ca_file: str | None
    tokens: dict[str, str]
    timeout: float = 30.0

    def _connection(self, timeout: float | None = None) -> http.client.HTTPSConnection:
        parsed = urllib.parse.urlsplit(self.url)
        context = ssl.create_default_context(cafile=self.ca_file)
        context.check_hostname = False
        return http.client.HTTPSConnection(
            parsed.hostname or "127.0.0.1",
            parsed.port,
            context=context,
            timeout=timeout or self.timeout,
        )

    def _request(self, step: Step) -> tuple[str, bytes | None, dict[str, str]]:
        target = step.path
        if step.query:
            target += "?" + urllib.parse.urlencode(step.query)
        headers = {"Accept": JSON, **step.headers}
        token = self.tokens.get(step.as_user)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload: bytes | None = None
        if step.body is not None:
            if isinstance(step.body, bytes):
                payload = step.body
            elif isinstance(step.body, str):
                payload = step.body.encode()
            else:
                payload = json.dumps(step.body).encode()
            headers["Content-Type"] = step.content_type or JSON
        return target, payload, headers

    def send(self, step: Step) -> Answer:
        target, payload, headers = self._request(step)
        connection = self._connection()
        try:
            connection.request(step.method, target, body=payload, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            kind = response.getheader("Content-Type", "") or ""
            warnings = response.headers.get_all("Warning") or []
            return Answer(response.status, _parse(raw, kind), kind, warnings)
        finally:
            connection.close()

    def watch(self, step: Step, count: int, timeout: float = 20.0) -> tuple[int, list[Any]]:
        """Open a watch and read up to ``count`` events (fewer if the server ends it first)."""
        target, payload, headers = self._request(step)
        connection = self._connection(timeout)
        try:
            connection.request(step.method, target, body=payload, headers=headers)
            response = connection.getresponse()
            if response.status != 200:
                return response.status, [_parse(response.read(), JSON)]
            events: list[Any] = []
            while len(events) < count:
                line = response.readline()
                if not line:
                    break
                if line.strip():
                    events.append(json.loads(line))
            return response.status, events
        finally:
            connection.close()

    def add_identity(self, name: str, token: str) -> None:
        self.tokens[name] = token


def _parse(raw: bytes, content_type: str) -> Any:
    if "json" in content_type:
        try:
            return json.loads(raw)
        except ValueError:
            pass
    return raw.decode(errors="replace")


class Normaliser:
    """Replaces what a server makes up (see the module docstring); one per sequence and server."""

    def __init__(self) -> None:
        self._uids: dict[str, str] = {}
        self._rvs: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        return self._walk(value, ())

    def _ordinal(self, table: dict[str, str], value: str, prefix: str) -> str:
        if value not in table:
            table[value] = f"<{prefix}-{len(table) + 1}>"
        return table[value]

    def _walk(self, value: Any, path: tuple[str, ...]) -> Any:
        if isinstance(value, dict):
            return self._dict(value, path)
        if isinstance(value, list):
            return [self._walk(item, (*path, "[]")) for item in value]
        if isinstance(value, str):
            return self._string(value)
        return value

    def _dict(self, value: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        is_list = isinstance(value.get("items"), list) and "metadata" in value
        for key, item in value.items():
            out[key] = self._walk(item, (*path, key))
        meta = out.get("metadata")
        if isinstance(meta, dict):
            # the emulator records only Apply operations' field sets: D190
            meta.pop("managedFields", None)
            rv = value["metadata"].get("resourceVersion")
            if isinstance(rv, str) and rv:
                meta["resourceVersion"] = (
                    "<list-rv>"
                    if is_list or value.get("kind") == "Status"
                    else self._ordinal(self._rvs, rv, "rv")
                )
            if meta.get("continue"):
                meta["continue"] = "<continue>"
            prefix = meta.get("generateName")
            name = meta.get("name")
            if prefix and isinstance(name, str) and name.startswith(prefix):
                meta["name"] = prefix + "<suffix>"
        if path[-1:] == ("spec",) and "clusterIP" in out:
            out["clusterIP"] = "<ip>"
            if "clusterIPs" in out:
                out["clusterIPs"] = ["<ip>" for _ in out["clusterIPs"]]
        return out

    def _string(self, value: str) -> str:
        if UUID.match(value):
            return self._ordinal(self._uids, value, "uid")
        if TIMESTAMP.match(value):
            return "<time>"
        value = UUID_IN_TEXT.sub(lambda m: self._ordinal(self._uids, m[0], "uid"), value)
        value = RV_IN_RECORD.sub("ResourceVersion in record (<rv>)", value)
        value = PATCHED_DOCUMENT.sub(r"\1<patched document>\2", value)
        return TOO_OLD.sub("too old resource version: <rv> (<rv>)", value)


def render(answers: Sequence[Any]) -> str:
    return json.dumps(answers, indent=1, sort_keys=True)


def difference(expected: Sequence[Any], actual: Sequence[Any], names: tuple[str, str]) -> str:
    """A unified diff of two normalised answer lists ('' when equal)."""
    if expected == actual:
        return ""
    return "\n".join(
        difflib.unified_diff(
            render(expected).splitlines(),
            render(actual).splitlines(),
            names[0],
            names[1],
            lineterm="",
            n=4,
        )
    )


@dataclass
class Recorder:
    """Sends a sequence's steps to one backend and records every answer, normalised."""

    backend: Backend
    normalise: Normaliser = field(default_factory=Normaliser)
    record: list[Any] = field(default_factory=list)

    def send(self, step: Step, view: Callable[[Any], Any] | None = None) -> Answer:
        """Send ``step`` and record its answer (status, body, ``Warning`` headers); ``view``
        picks what of a successful body is compared, where the rest is not the server's to
        decide (a controller's progress, racing the sequence)."""
        answer = self.backend.send(step)
        body = view(answer.body) if view is not None and answer.ok() else answer.body
        self._keep(step, answer.status, body, answer.warnings)
        return answer

    def wait(self, step: Step, done: Callable[[Answer], Any], timeout: float = 60.0) -> Answer:
        """Send ``step`` until ``done(answer)`` holds, recording nothing."""
        from localcluster.testing import wait_for

        answer: Answer = wait_for(
            lambda: (a := self.backend.send(step)) and done(a) and a,
            timeout,
            what=f"{step.path} on {self.backend.name}",
        )
        return answer

    def watch(self, step: Step, count: int, timeout: float = 20.0) -> list[Any]:
        status, events = self.backend.watch(step, count, timeout)
        self._keep(step, status, events)
        return events

    def until(self, step: Step, done: Any, timeout: float = 60.0, what: str = "") -> Answer:
        """Send ``step`` until ``done(answer)`` holds; record the answer that made it hold."""
        from localcluster.testing import wait_for

        answer: Answer = wait_for(
            lambda: (a := self.backend.send(step)) and done(a) and a,
            timeout,
            what=f"{what or step.path} on {self.backend.name}",
        )
        self._keep(step, answer.status, answer.body)
        return answer

    def note(self, label: str, value: Any) -> None:
        self.record.append({"note": label, "value": self.normalise(value)})

    def _keep(self, step: Step, status: int, body: Any, warnings: Sequence[str] = ()) -> None:
        query = "&".join(
            f"{k}={'<rv>' if k == 'resourceVersion' and v not in ('', '0') else v}"
            for k, v in step.query.items()
            if k != "continue"
        )
        self.record.append(
            {
                "request": f"{step.method} {step.path}{'?' + query if query else ''}",
                "status": status,
                "body": self.normalise(body),
                **({"warnings": self.normalise(list(warnings))} if warnings else {}),
            }
        )


def compare(backends: Sequence[Backend], sequence: Any) -> str:
    """Run ``sequence(recorder)`` on every backend at once; the diff of each to the first."""
    from concurrent.futures import ThreadPoolExecutor

    recorders = [Recorder(b) for b in backends]
    with ThreadPoolExecutor(len(recorders)) as pool:
        for future in [pool.submit(sequence, r) for r in recorders]:
            future.result()
    reference = recorders[0]
    dump = os.environ.get("DIFFERENTIAL_DUMP")
    if dump:  # both records whole, for a reader of a difference
        for r in recorders:
            with open(f"{dump}.{r.backend.name}.json", "w") as out:
                out.write(render(r.record))
    return "\n".join(
        difference(reference.record, r.record, (reference.backend.name, r.backend.name))
        for r in recorders[1:]
    )
