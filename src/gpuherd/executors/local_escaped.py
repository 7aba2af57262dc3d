"""Processes that left a job's process group, found by the attempt folder in their environment.

A job's processes normally stay in the session its shell leads, and the executor signals that
whole group. A process that calls setsid (`setsid prog &`, a daemonizing double fork, `ray
start` inside a job) leaves it, and would outlive a killed or finished job, holding its GPU
from the next one. Every process a job starts inherits GPUHERD_ATTEMPT_DIR, which names one
attempt of one job of one gpuherd home (the job id alone does not: `gpuherd run` and other
homes number their jobs from 1 too), so they are found in /proc by it. The one exception is a
sweep point's folder, which a later job of the point reuses: the sweeper spares attempts
running now. A process that clears its environment (`env -i prog`) cannot be found this way.

On-end hooks are told the attempt folder of the job that ended too; their environment also
carries GPUHERD_JOB_STATE, which a job's never does (jobfiles.job_env drops it), and they
are left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Collection, Iterator

from gpuherd.jobfiles import HOOK_VARIABLE

_HOOK_MARK = b"\0" + HOOK_VARIABLE.encode() + b"="

SWEEP_DELAY = 0.1
"""Seconds between a job's end and the pass that kills what escaped its group: one pass of
/proc then serves all the jobs that ended meanwhile (a pass costs ~0.3 ms per 100 processes,
too much to pay for each of a thousand trivial jobs a second)."""


def _marker(attempt_dir: str) -> bytes:
    return b"\0GPUHERD_ATTEMPT_DIR=" + os.fsencode(attempt_dir) + b"\0"


def _other_pids() -> Iterator[int]:
    own = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != own:
            yield int(name)


def _environment(pid: int) -> bytes:
    """A process's environment, NUL before every entry and after the last; empty when it is
    gone, a zombie, or another user's."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return b"\0" + f.read()
    except OSError:
        return b""


def _belongs(environment: bytes, markers: Collection[bytes]) -> bool:
    return _HOOK_MARK not in environment and any(m in environment for m in markers)


def signal_escaped(attempt_dirs: Collection[str], signum: int, group: int = 0) -> int:
    """Send `signum` to every other process whose environment names one of these attempts,
    except members of `group` (signalled with it already: a second SIGTERM or SIGINT means
    "hurry" to some programs); return how many were signalled."""
    markers = [_marker(d) for d in attempt_dirs]
    if not markers:
        return 0
    sent = 0
    for pid in _other_pids():
        if not _belongs(_environment(pid), markers):
            continue
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue  # gone meanwhile
        try:
            # Read again through the pinned process: the pid cannot have been taken by
            # another process between this check and the signal.
            if _belongs(_environment(pid), markers) and os.getpgid(pid) != group:
                signal.pidfd_send_signal(fd, signum)
                sent += 1
        except OSError:
            pass  # ended meanwhile
        finally:
            os.close(fd)
    return sent


def attempt_alive(pgid: int, attempt_dir: str) -> bool:
    """Whether a process that is not a zombie is left in the job's group or carries its
    attempt in its environment (read from /proc: no kernel event tells when they are gone)."""
    markers = [_marker(attempt_dir)]
    for pid in _other_pids():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z":
            continue
        if int(fields[2]) == pgid or _belongs(_environment(pid), markers):
            return True
    return False


class EscapedSweeper:
    """Kills the escaped processes of attempts that ended, SWEEP_DELAY after the first of
    them, in one pass for all.

    `in_use` gives the attempt folders of the attempts running now: a sweep point rerun at
    once (`sweep --force`, a failed point's rerun) runs its new job in the folder the ended
    one used, and its processes carry the same GPUHERD_ATTEMPT_DIR; they are spared."""

    def __init__(self, in_use: Callable[[], Collection[str]]) -> None:
        self._in_use = in_use
        self._due: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, attempt_dir: str) -> None:
        self._due.add(attempt_dir)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SWEEP_DELAY, self.sweep)

    def sweep(self) -> None:
        self._timer = None
        due, self._due = self._due, set()
        signal_escaped(due.difference(self._in_use()), signal.SIGKILL)

    def close(self) -> None:
        """Sweep now what is due: the loop may not run again."""
        if self._timer is not None:
            self._timer.cancel()
        with contextlib.suppress(OSError):
            self.sweep()
