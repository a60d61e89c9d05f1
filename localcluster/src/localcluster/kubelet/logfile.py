"""A container's log file with the time of every line, as a container runtime keeps it.

The process runtime does not let a container write its log file directly: ``LogPump`` copies
the container's output pipe into ``<attempt>.log`` byte for byte and, beside it, records in
``<attempt>.log.times`` the offset and wall-clock time at which every line began (16 bytes a
line: little-endian offset and time). ``TimedLogReader`` reads both back as ``(time, line)``
pairs, incrementally for a follower, which is what ``timestamps`` and ``sinceSeconds`` of
``GET containerLogs`` need (the kubelet reads them from the CRI log's per-line stamps).
Plain reads keep reading the ``.log`` file alone.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from typing import IO

_RECORD = struct.Struct("<Qd")
_CHUNK = 64 * 1024


def times_path(log_path: str) -> str:
    return log_path + ".times"


def stamp_lines(log: IO[bytes], times: IO[bytes], data: bytes, at_line_start: bool) -> bool:
    """Append ``data`` to ``log`` and the start of each of its lines, stamped now, to
    ``times``; returns whether the log now ends at a line start."""
    offset = log.seek(0, os.SEEK_END)
    now = time.time()
    starts = [offset] if at_line_start and data else []
    index = data.find(b"\n")
    while index != -1 and index + 1 < len(data):
        starts.append(offset + index + 1)
        index = data.find(b"\n", index + 1)
    log.write(data)
    times.write(b"".join(_RECORD.pack(start, now) for start in starts))
    log.flush()
    times.flush()
    return data.endswith(b"\n") if data else at_line_start


def append_line(log_path: str, line: bytes) -> None:
    """Write one line (the runtime's own message) to a log and its index."""
    with open(log_path, "ab") as log, open(times_path(log_path), "ab") as times:
        size = log.seek(0, os.SEEK_END)
        at_start = size == 0 or _last_byte(log_path, size) == b"\n"
        stamp_lines(log, times, line, at_start)


def _last_byte(path: str, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


class LogPump:
    """Copies a container's output pipe into its log file and line index, on a thread."""

    def __init__(self, pipe: IO[bytes], log_path: str) -> None:
        self._pipe = pipe
        self._log_path = log_path
        self.done = threading.Event()  # set once the pipe reached its end
        self._thread = threading.Thread(target=self._run, name="log-pump", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._pipe.fileno()
        try:
            with open(self._log_path, "ab") as log, open(times_path(self._log_path), "ab") as times:
                at_line_start = log.seek(0, os.SEEK_END) == 0
                while True:
                    data = os.read(fd, _CHUNK)
                    if not data:
                        return
                    at_line_start = stamp_lines(log, times, data, at_line_start)
        except OSError:
            return
        finally:
            self._pipe.close()
            self.done.set()


class TimedLogReader:
    """Reads a log file and its index as ``(time, line)`` pairs, from where it left off."""

    def __init__(self, log_path: str) -> None:
        self._log = open(log_path, "rb")  # noqa: SIM115 - closed by ``close``
        self._times_path = times_path(log_path)
        self._times_offset = 0
        self._starts: dict[int, float] = {}
        self._offset = 0  # where the next unread line begins
        self._pending = b""  # an unfinished last line
        self._last_time = os.path.getmtime(log_path)

    def lines(self, final: bool) -> list[tuple[float, bytes]]:
        """The complete lines written since the last call (and an unfinished last line too
        when ``final``)."""
        self._read_index()
        data = self._pending + self._log.read()
        out: list[tuple[float, bytes]] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end == -1:
                break
            out.append((self._time_at(self._offset + start), data[start : end + 1]))
            start = end + 1
        self._pending = data[start:]
        self._offset += start
        if final and self._pending:
            out.append((self._time_at(self._offset), self._pending))
            self._offset += len(self._pending)
            self._pending = b""
        return out

    def _read_index(self) -> None:
        try:
            with open(self._times_path, "rb") as handle:
                handle.seek(self._times_offset)
                raw = handle.read()
        except OSError:
            return
        whole = len(raw) - len(raw) % _RECORD.size
        for offset, when in _RECORD.iter_unpack(raw[:whole]):
            self._starts[offset] = when
        self._times_offset += whole

    def _time_at(self, offset: int) -> float:
        """A line's time: its own stamp, else the last one seen (a line written by hand)."""
        when = self._starts.pop(offset, None)
        if when is not None:
            self._last_time = when
        return self._last_time

    def close(self) -> None:
        self._log.close()
