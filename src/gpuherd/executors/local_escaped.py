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

The passes run on a thread of their own (ProcScanner): reading a process's environment waits
for the lock on its memory map, which a process stuck in the kernel (a hung GPU driver call,
an NFS server gone) can hold for ever. `ps` hangs on such a process; the engine must not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import signal
import threading
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

from gpuherd.jobfiles import HOOK_VARIABLE

log = logging.getLogger("gpuherd.executor")
P = ParamSpec("P")
T = TypeVar("T")

_HOOK_MARK = b"\0" + HOOK_VARIABLE.encode() + b"="

SWEEP_DELAY = 0.1
"""Seconds between a job's end and the pass that kills what escaped its group: one pass of
/proc then serves all the jobs that ended meanwhile (a pass costs ~0.3 ms per 100 processes,
too much to pay for each of a thousand trivial jobs a second)."""
CLOSE_WAIT = 5.0
"""Seconds a closing executor waits for its last pass (a stuck process must not keep a
daemon or `gpuherd run` from exiting)."""


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


class ProcScanner:
    """Runs the passes over /proc one after another, in order, on a thread of its own."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()

        def call() -> None:
            try:
                future.set_result(fn(*args, **kwargs))
            except Exception as exc:
                future.set_exception(exc)

        future.add_done_callback(_log_failure)
        self._work.put(call)
        if self._thread is None:  # a daemon thread: a pass stuck for ever never blocks exit
            self._thread = threading.Thread(target=self._serve, name="gpuherd-proc", daemon=True)
            self._thread.start()
        return future

    def _serve(self) -> None:
        while (call := self._work.get()) is not None:
            call()

    def close(self) -> None:
        """End the thread once the passes asked for so far are done."""
        if self._thread is not None:
            self._work.put(None)
            self._thread = None


def _log_failure(future: Future[Any]) -> None:
    if (exc := future.exception()) is not None:
        log.warning("a pass over /proc for escaped processes failed: %s", exc)


class EscapedSweeper:
    """Kills the escaped processes of attempts that ended, SWEEP_DELAY after the first of
    them, in one pass for all.

    `in_use` gives the attempt folders of the attempts running now: a sweep point rerun at
    once (`sweep --force`, a failed point's rerun) runs its new job in the folder the ended
    one used, and its processes carry the same GPUHERD_ATTEMPT_DIR; they are spared."""

    def __init__(self, in_use: Callable[[], Collection[str]], scanner: ProcScanner) -> None:
        self._in_use = in_use
        self._scanner = scanner
        self._due: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, attempt_dir: str) -> None:
        self._due.add(attempt_dir)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SWEEP_DELAY, self.sweep)

    def sweep(self) -> Future[int]:
        self._timer = None
        due, self._due = self._due, set()
        return self._scanner.submit(signal_escaped, due.difference(self._in_use()), signal.SIGKILL)

    def close(self) -> None:
        """Sweep now what is due (the loop may not run again), waiting CLOSE_WAIT at most."""
        if self._timer is not None:
            self._timer.cancel()
        with contextlib.suppress(Exception):  # timed out, or failed (logged)
            self.sweep().result(timeout=CLOSE_WAIT)
