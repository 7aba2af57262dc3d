"""Signalling a job's process group, and never another program's that got its number.

A job's shell leads its own session, and the executor signals its whole process group: at a
stop (SIGTERM, then SIGKILL after the grace) and at the job's end (SIGKILL, so that nothing
the job started outlives it). killpg(N) signals whatever group has the number N *now*. Linux
keeps N while the leader or any process of its group or session exists, and the daemon's own
child stays an unreaped zombie until its group has been killed. But a leader re-attached after
a restart is not the daemon's child: once its whole group is gone, N can be given to an
unrelated program that makes itself a group leader (`setsid`; pid_max is 32768 on many
machines), and a killpg at the job's end, or a stop or pause that comes just then, would hit it.

So the group is signalled through the pidfd the executor opened on its leader when it began
to watch it (PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9). A pidfd names the leader's own process,
never one that got its number later; the kernel signals the processes whose group is that
leader's, also after the leader itself has ended, and none once they are gone (ESRCH).

Without that (an older kernel, or no pidfd: the leader had ended before the daemon watched
it), killpg is used only while the group holds a process known to be the job's: the leader
itself, one that carries the attempt's key, or one started before the leader was last seen
alive (a program that takes the number later starts after the whole group has gone); that
check reads /proc, on the scanner's thread. There the check and the killpg are two steps: a
group that empties, and whose number is taken again, between them is not covered.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time

from gpuherd.executors.local_escaped import ProcScanner, attempt_alive, job_in_group

PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2
"""pidfd_send_signal's flag for the leader's whole group (linux/pidfd.h; Linux 6.9)."""

_NO_GROUP = -1
"""A process group number no process has."""


def boot_ticks() -> int:
    """Now, in clock ticks since boot: how /proc/PID/stat counts a process's start."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def open_leader(pid: int) -> tuple[int | None, int]:
    """A pidfd for a job's leader and when it was seen alive (boot_ticks, taken before: the
    leader lived then); (None, 0) when it has ended and been reaped. (Older kernels say EINVAL,
    not ESRCH, while its number still names the group it left running.)"""
    seen = boot_ticks()
    try:
        return os.pidfd_open(pid), seen
    except OSError as e:
        if e.errno not in (errno.ESRCH, errno.EINVAL):
            raise
        return None, 0


def _group_signal(pidfd: int, signum: int) -> bool | None:
    """Signal the group the pidfd's process leads: whether it held a process; None where the
    kernel cannot (before 6.9)."""
    try:
        signal.pidfd_send_signal(pidfd, signum, None, PIDFD_SIGNAL_PROCESS_GROUP)
    except ProcessLookupError:
        return False
    except OSError as e:
        if e.errno != errno.EINVAL:  # (EPERM: none of its processes may be signalled)
            raise
        return None
    return True


def _exists(pidfd: int) -> bool:
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except OSError:
        return False
    return True


def signal_group(
    pgid: int, signum: int, pidfd: int | None, key: str, seen: int, scanner: ProcScanner
) -> None:
    """Send `signum` to the job's process group `pgid`, if it still has one: `pidfd` is its
    leader's (None if the leader had ended before it was watched), `key` the attempt's,
    `seen` when the leader was seen alive (boot_ticks; 0: never)."""
    if pidfd is not None:
        if _group_signal(pidfd, signum) is not None:
            return
        if _exists(pidfd):  # (a zombie too): its number is still its group's
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signum)
            return
    # Which processes are the job's is read from /proc, and reading an environment can wait
    # for ever on a process stuck in the kernel: on the scanner's thread, after the passes
    # asked before (their signals keep their order).
    scanner.submit(_signal_if_job, pgid, signum, key, seen)


def _signal_if_job(pgid: int, signum: int, key: str, seen: int) -> None:
    if job_in_group(pgid, key, seen):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)


def group_alive(pgid: int, pidfd: int | None, key: str) -> bool:
    """Whether a live process is left in the job's group or carries its key: a group that
    the leader's pidfd says is gone no longer counts, whatever has taken its number."""
    if pidfd is not None:
        with contextlib.suppress(OSError):  # (EBADF: the job was concluded meanwhile)
            if _group_signal(pidfd, 0) is False:
                pgid = _NO_GROUP
    return attempt_alive(pgid, key)
