"""A signal that reaches a job's shell just as it starts the command, and not the command.

The job's shell traps HUP, INT and TERM (local_shell.py), and POSIX has it run such a trap
only once its foreground command has ended. A signal sent to the job's group in two short
moments reaches the shell's trap, and never the command:
- the shell is between its last look at trapped signals and the fork of the command
  (expanding the command's words: microseconds, or seconds for a `${var%%pattern}` on a long
  value): the command, forked just after, never gets it (nor one the shell `exec`s then);
- the command is forked but has not yet exec'd its program: the child still has the shell's
  trap, and exec drops the caught signal.
Either way the shell then waits for the command to end on its own: a job stopped as it
starts runs on until the grace's SIGKILL, without its chance to save a checkpoint.

So, for a trapped signal, the job's shell is looked at before it is sent: its children that
still run the shell then are watched, and each that goes on to run a program gets the signal
again (had the signal reached the program, it would have ended it: a program just started
has no handler yet). A shell with no child then is watched too: what it starts over the next
moments gets the signal once (its children; the program it becomes). A shell waiting for a
child runs its trap, and starts nothing, once that child ends, so only this case needs it.
The exceptions, rare: a job line that sets its own trap for the signal and starts programs
from it, in a moment when no child ran (those programs get the signal too); and a shell that
forks the command after a `$(...)` it was waiting for ended (not seen).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuherd.executors import local_proc

TRAPPED = frozenset({signal.SIGHUP, signal.SIGINT, signal.SIGTERM})
"""The signals the job's shell traps (local_shell.JOB_SHELL), so defers."""

_POLL = 0.005
"""Seconds between looks: a command that missed its signal runs on until it is found."""
_LONGEST = 10.0
"""Seconds a job is watched at most (a pathological expansion)."""
_SETTLE = 0.05
"""Seconds a childless shell is watched once it started something (the rest of a pipeline)."""


def shell_name(shell: str) -> str:
    """The name /proc/PID/stat gives a process that runs `shell` (its file name, cut to 15
    bytes): what tells the job's shell from a program it `exec`d."""
    return os.path.basename(shell)[:15]


def _send(pidfd: int, signums: Sequence[int]) -> None:
    for signum in signums:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signum)


def _open_child(leader: int, child: int) -> int | None:
    """A pidfd for the leader's child `child` (None if it is no longer that): taken before
    its /proc entry is read, so a number reused once it ended is never signalled."""
    try:
        fd = os.pidfd_open(child)
    except OSError:
        return None
    now = local_proc.stat(child)
    if now is None or now.parent != leader or not now.alive:
        os.close(fd)
        return None
    return fd


@dataclass
class Plan:
    """What to watch once a trapped signal is sent to a job's group (LateForks.plan)."""

    childless: bool
    """The shell had no child: what it starts gets the signal."""
    unexeced: dict[int, int]
    """The shell's children that had not exec'd a program yet (pid: pidfd)."""
    signums: tuple[int, ...]
    image: tuple[bytes, bytes]
    """The shell's (local_proc.ProcStat.image): its children's until they exec."""


@dataclass
class _Watched:
    leader_fd: int
    plan: Plan
    until: float
    handle: asyncio.TimerHandle | None = None
    started: set[int] = field(default_factory=set)


class LateForks:
    """Watches the jobs a trapped signal may have missed (module docstring). The executor
    says which shell each job it launched runs, asks for a `plan` before it signals a job's
    group and hands it to `signalled` after, and `forget`s a job once it is concluded."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._watched: dict[int, _Watched] = {}

    def launched(self, pid: int, shell: str) -> None:
        self._names[pid] = shell_name(shell)

    def plan(self, pid: int, signums: Sequence[int]) -> Plan | None:
        """What `signums` sent to the job's group now may miss (looked at before sending: a
        command forked after would seem to have got it). None: nothing to watch; also for a
        job re-attached after a restart, whose shell is not known."""
        name = self._names.get(pid)
        trapped = tuple(s for s in signums if s in TRAPPED)
        if name is None or pid in self._watched or not trapped:
            return None
        leader = local_proc.stat(pid)
        if leader is None or leader.name != name or not leader.alive:
            return None
        unexeced = {}
        children = set(local_proc.children(pid))
        for child in children:
            now = local_proc.stat(child)
            same = now is not None and now.image == leader.image
            if same and (fd := _open_child(pid, child)) is not None:
                unexeced[child] = fd
        return Plan(not children, unexeced, trapped, leader.image)

    def signalled(self, pid: int, leader_fd: int, plan: Plan) -> None:
        """The group got the plan's signals: watch what may have missed them."""
        if not plan.childless and not plan.unexeced:
            return
        loop = asyncio.get_running_loop()
        w = _Watched(leader_fd, plan, loop.time() + _LONGEST)
        self._watched[pid] = w
        w.handle = loop.call_later(_POLL, self._look, pid)

    def _look(self, pid: int) -> None:
        w = self._watched[pid]
        for child, fd in list(w.plan.unexeced.items()):
            now = local_proc.stat(child)
            if now is not None and now.alive and now.image == w.plan.image:
                continue  # still the shell's copy: not yet exec'd
            if now is not None and now.alive and now.parent == pid:
                _send(fd, w.plan.signums)  # (its fd names it, whatever its number names)
            del w.plan.unexeced[child]
            os.close(fd)
        loop = asyncio.get_running_loop()
        if w.plan.childless:
            self._childless_look(pid, w, loop.time())
        if (not w.plan.childless and not w.plan.unexeced) or loop.time() >= w.until:
            self.forget(pid, keep_name=True)
            return
        w.handle = loop.call_later(_POLL, self._look, pid)

    def _childless_look(self, pid: int, w: _Watched, now: float) -> None:
        leader = local_proc.stat(pid)
        if leader is None or not leader.alive:
            w.plan.childless = False
            return
        if leader.image != w.plan.image:  # it exec'd the command: its pending trap went too
            _send(w.leader_fd, w.plan.signums)
            w.plan.childless = False
            return
        started = set(local_proc.children(pid)) - w.started
        for child in started:
            if (fd := _open_child(pid, child)) is None:
                continue
            seen = local_proc.stat(child)
            if seen is not None and seen.image == w.plan.image:
                w.plan.unexeced[child] = fd  # sent once it has exec'd (its trap is the shell's)
                continue
            _send(fd, w.plan.signums)
            os.close(fd)
        w.started |= started
        if started:
            w.until = min(w.until, now + _SETTLE)
        if now >= w.until:
            w.plan.childless = False

    def forget(self, pid: int, keep_name: bool = False) -> None:
        """Stop watching the job (and, unless `keep_name`, forget its shell)."""
        w = self._watched.pop(pid, None)
        if w is not None:
            if w.handle is not None:
                w.handle.cancel()
            for fd in w.plan.unexeced.values():
                os.close(fd)
        if not keep_name:
            self._names.pop(pid, None)

    def close(self) -> None:
        for pid in list(self._watched):
            self.forget(pid)
        self._names.clear()
