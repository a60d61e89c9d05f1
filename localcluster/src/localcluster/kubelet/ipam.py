"""Unique loopback pod IPs (127.x.y.z), shared by every kubelet of a cluster.

Linux routes all of 127.0.0.0/8 to the loopback device, so each pod can own an
address without network namespaces. Addresses come from 127.1.0.1-127.254.255.254
(keeping 127.0.x.x for the host: 127.0.0.1, Debian's 127.0.1.1) and are handed
out round-robin from a random starting point, so a released address is reused as
late as possible and two clusters on one machine (parallel test runs) are
unlikely to hand out the same address.
"""

from __future__ import annotations

import ipaddress
import random
import threading


class IPAllocator:
    """Thread-safe allocator; ``allocate`` raises RuntimeError when exhausted."""

    def __init__(
        self, first: str = "127.1.0.1", last: str = "127.254.255.254", start: str | None = None
    ) -> None:
        self._first = int(ipaddress.IPv4Address(first))
        self._last = int(ipaddress.IPv4Address(last))
        if start is None:
            self._next = random.randint(self._first, self._last)
        else:
            self._next = int(ipaddress.IPv4Address(start))
        self._used: set[int] = set()
        self._lock = threading.Lock()

    def allocate(self) -> str:
        with self._lock:
            size = self._last - self._first + 1
            for _ in range(size):
                candidate = self._next
                self._next = self._first if candidate >= self._last else candidate + 1
                if candidate in self._used or candidate & 0xFF in (0, 255):
                    continue
                self._used.add(candidate)
                return str(ipaddress.IPv4Address(candidate))
        raise RuntimeError("no free pod IP addresses")

    def reserve(self, address: str) -> bool:
        """Mark an address already in use (e.g. a pod found running after a restart)."""
        value = int(ipaddress.IPv4Address(address))
        with self._lock:
            if value in self._used:
                return False
            self._used.add(value)
            return True

    def release(self, address: str) -> None:
        with self._lock:
            self._used.discard(int(ipaddress.IPv4Address(address)))

    def in_use(self) -> int:
        with self._lock:
            return len(self._used)
