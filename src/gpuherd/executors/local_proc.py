"""What /proc says of a process: its stat line and its children.

Both are read from files that take no lock a process stuck in the kernel holds (unlike its
environment or command line, which wait for the lock on its memory map), so the event loop
may read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    """/proc/PID/stat: the program's name, and the fields after it (`fields[0]` the state)."""

    name: str
    fields: list[bytes]

    @property
    def state(self) -> bytes:
        return self.fields[0]

    @property
    def alive(self) -> bool:
        """Not a zombie (ended, not yet reaped)."""
        return self.state != b"Z"

    @property
    def parent(self) -> int:
        return int(self.fields[1])

    @property
    def group(self) -> int:
        return int(self.fields[2])

    @property
    def started(self) -> int:
        """Clock ticks from boot to the process's start."""
        return int(self.fields[19])

    @property
    def image(self) -> tuple[bytes, bytes]:
        """Where its program's code and arguments lie: a fork keeps them, an exec moves them
        (address space randomisation), also when the program is the same (`sh script.sh`).
        Empty before Linux 3.5."""
        fields = self.fields
        return (fields[23], fields[45]) if len(fields) > 45 else (b"", b"")


def stat(pid: int) -> ProcStat | None:
    """The process's /proc/PID/stat; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read()
    except OSError:
        return None
    # The name may hold spaces and parentheses: it ends at the last ')'.
    end = line.rindex(b")")
    name = line[line.index(b"(") + 1 : end].decode(errors="replace")
    return ProcStat(name, line[end + 2 :].split())


def children(pid: int) -> list[int]:
    """The process's children (/proc's list of them: every thread's, the main one's here)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(child) for child in f.read().split()]
    except OSError:
        return []
