"""LIST pages and continue tokens, as kube-apiserver's storage layer serves them.

Objects are listed in etcd key order: ``<namespace>/<name>`` for namespaced kinds (so
``team-1/x`` comes before ``team/x``), the name for cluster-scoped ones. The store keeps these
sort keys in a sorted list, so a namespace is one contiguous range and a page costs
O(log n + page), never a sort.

A ``Snapshot`` is one resource's objects at one resourceVersion: the sorted keys and the
objects by key, both frozen (the store copies them before its next write once a snapshot shares
them). Every page of a paginated list is read from the snapshot of its first page's RV, as etcd
reads each page at the revision in the continue token: objects written in between do not show,
and every page reports the same list RV.

A page fills up to ``limit`` matching objects; it has more (and a continue token) when any key
follows the one that filled it, matching or not, as in etcd (so a selector's last page may be
empty). ``remainingItemCount`` is set only without selectors. The token is the real server's:
unpadded base64url of ``{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the prefix>\\u0000"}``;
a token with ``rv`` -1 (handed out with a 410) continues at the latest RV.
"""

from __future__ import annotations

import base64
import bisect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localcluster.apimachinery import deepjson, errors, gobase64

Key = tuple[str, str]  # (namespace or "", name)
TOKEN_VERSION = "meta.k8s.io/v1"
LATEST = -1  # a continue token's rv that means "at the latest resourceVersion"


def sort_key(key: Key) -> str:
    """The key's place in etcd order: ``namespace/name``, or the name of a cluster object."""
    return f"{key[0]}/{key[1]}" if key[0] else key[1]


def store_key(text: str) -> Key:
    """The inverse of ``sort_key`` (names never contain a slash)."""
    namespace, _, name = text.rpartition("/")
    return (namespace, name)


@dataclass(frozen=True)
class Snapshot:
    """One resource's objects at ``rv``: sorted sort keys and objects by store key; frozen."""

    rv: int
    keys: list[str]
    objects: dict[Key, dict[str, Any]]

    def span(self, namespace: str | None) -> tuple[int, int]:
        """The index range of one namespace's keys (all keys when ``namespace`` is None)."""
        if namespace is None:
            return 0, len(self.keys)
        # "/" sorts right before "0", so "<ns>/" .. "<ns>0" holds exactly that namespace
        return (
            bisect.bisect_left(self.keys, f"{namespace}/"),
            bisect.bisect_left(self.keys, f"{namespace}0"),
        )


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    token: str | None  # continue token, when more keys follow
    remaining: int | None  # remainingItemCount (only without a selector)


def read_page(
    snap: Snapshot,
    namespace: str | None,
    predicate: Callable[[dict[str, Any]], bool] | None,
    limit: int | None,
    start: str | None,
) -> Page:
    """Up to ``limit`` (None: every) matching objects of ``namespace`` from key ``start`` on."""
    lo, hi = snap.span(namespace)
    first = max(lo, bisect.bisect_left(snap.keys, start)) if start is not None else lo
    items: list[dict[str, Any]] = []
    index, last = first, ""
    while index < hi:
        if limit is not None and len(items) >= limit:
            break
        last = snap.keys[index]
        obj = snap.objects[store_key(last)]
        if predicate is None or predicate(obj):
            items.append(obj)
        index += 1
    if index >= hi:
        return Page(items, None, None)
    token = encode_continue(snap.rv, relative(last, namespace) + "\x00")
    remaining = hi - first - len(items) if predicate is None else None
    return Page(items, token, remaining)


def relative(text: str, namespace: str | None) -> str:
    """A sort key as the token carries it: relative to the list's key prefix."""
    return text[len(namespace) + 1 :] if namespace is not None else text


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": TOKEN_VERSION, "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str, namespace: str | None) -> tuple[int, str]:
    """(rv, first sort key) of a continue token; 400 with the real server's words when it is
    malformed."""
    try:
        raw = gobase64.decode(token, url=True, padded=False)
    except ValueError as e:  # CorruptInput
        raise _invalid(f"continue key is not valid: {e}") from e
    try:
        data = deepjson.loads(raw)  # Go's scanner and its messages
    except ValueError as e:
        raise _invalid(f"continue key is not valid: {e}") from e
    if not isinstance(data, dict):
        raise _invalid("continue key is not valid: the token is no JSON object")
    version, rv, start = data.get("v"), data.get("rv"), data.get("start")
    if version != TOKEN_VERSION:
        raise _invalid(
            f"continue key is not valid: server does not recognize this encoded version {version}"
        )
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise _invalid(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    if not isinstance(start, str) or not start:
        raise _invalid(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
        )
    key = start if start.startswith("/") else "/" + start
    if not _clean(key):
        raise _invalid(f"continue key is not valid: {start}")
    return rv, (f"{namespace}/{key[1:]}" if namespace is not None else key[1:])


def _clean(key: str) -> bool:
    """Whether Go's ``path.Clean`` leaves ``key`` (which starts with "/") as it is: no empty,
    "." or ".." segment and no trailing slash, so a token cannot leave its list's prefix."""
    return key == "/" or all(s not in ("", ".", "..") for s in key[1:].split("/"))


def _invalid(reason: str) -> errors.StatusError:
    return errors.bad_request(f"invalid continue token: {reason}")
