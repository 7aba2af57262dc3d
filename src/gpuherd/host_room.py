"""The host memory placement may give out: what the machine has available now, less what
running jobs' --ram holds and they do not use yet (core/host_ram.py).

Both are read together, at most once per `max_age` (a busy queue places hundreds of times a
second): the resident memory of each running job's processes with --ram (its process tree,
from /proc, which takes no lock a process stuck in the kernel holds: executors/local_proc.py),
then MemAvailable. Measured in that order, a job that grows between the two counts twice,
never not at all. Jobs without --ram are not measured: they hold nothing.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from gpuherd.core.host_ram import RunKey, ram_held
from gpuherd.executors.local_proc import children, stat
from gpuherd.host_memory import host_memory_available

_RSS_FIELD = 21
"""/proc/PID/stat's resident set (in pages) in ProcStat.fields (its 24th field)."""
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class RamRun(Protocol):
    """A running attempt as this reads it (attempts.Live)."""

    job_id: int
    attempt: int
    pid: int
    ram: int | None


@dataclass(frozen=True, slots=True)
class HostMemory:
    available: int
    """Bytes the machine has available (MemAvailable), as last read."""
    held: int
    """Bytes of that the running jobs' --ram holds (core/host_ram.ram_held)."""

    @property
    def room(self) -> int:
        """What placement may give out (before `keep-ram`)."""
        return self.available - self.held


class HostRoom:
    def __init__(self) -> None:
        self._at = -math.inf
        self._available = 0
        self._used: dict[RunKey, int] = {}

    def read(self, max_age: float, runs: Iterable[RamRun]) -> HostMemory:
        """The host's memory now, read again when the last reading is older than `max_age`
        seconds; `runs`: the running attempts (those with --ram hold memory)."""
        asked = [r for r in runs if r.ram]
        now = time.monotonic()
        if now - self._at > max_age:
            self._used = {(r.job_id, r.attempt): tree_rss(r.pid) for r in asked}  # (first)
            self._available, self._at = host_memory_available(), now
        if not asked:
            return HostMemory(self._available, 0)
        held = ram_held((((r.job_id, r.attempt), r.ram or 0) for r in asked), self._used)
        return HostMemory(self._available, held)


def tree_rss(pid: int) -> int:
    """Bytes resident of the process and all its descendants (each counted whole: pages two
    of them share, as a fork's, count twice); 0 once it is gone or where /proc is not."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen or (found := stat(p)) is None:
            continue
        seen.add(p)
        if found.alive and len(found.fields) > _RSS_FIELD:
            total += int(found.fields[_RSS_FIELD]) * _PAGE
        todo.extend(children(p))
    return total
