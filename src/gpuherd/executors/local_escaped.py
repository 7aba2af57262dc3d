"""Processes that left a job's process group, found by the attempt key in their environment.

A job's processes normally stay in the session its shell leads, and the executor signals that
whole group. A process that calls setsid (`setsid prog &`, a daemonizing double fork, `ray
start` inside a job) leaves it, and would outlive a killed or finished job, holding its GPU
from the next one. Every process a job starts inherits GPUHERD_ATTEMPT_KEY, `HOME:JOB:N`:
the id of the gpuherd home (a digest of its folder's path; each `gpuherd run` has its own),
the job id and the attempt number. It names one attempt of one job of one home, also when
another job runs in the same folder (a sweep point's later job, two sweeps or two runs into
one results folder), so they are found in /proc by it. A process that clears its environment
(`env -i prog`), or writes over it (setproctitle, which Ray's workers and gunicorn call), is
not found.

What ended attempts left is killed by one pass for the whole home (LeftoverSweeper): every
process with a key of this home whose attempt is not running now. The same pass runs when a
daemon starts, so what a daemon killed at the wrong moment missed is caught by the next one;
an attempt being stopped whose shell ended while no daemon ran, but whose other processes
still run (`outlived`), counts as running until they end or its grace runs out. What that
first pass finds of attempts the database does not know did not end: herd.db was moved aside
(as the daemon advises for a damaged one), deleted, or restored from an older backup while
they ran. They run on, untouched, the log says so, and their GPUs are held while they run
(local_unwatched.py). (Later, an attempt the database does not know is one of a job removed
since it ended: what it left is killed.)

On-end hooks carry GPUHERD_JOB_STATE, which a job's environment never does (jobfiles.job_env
drops it), and are left alone; so are the processes of jobs the Ray executor runs on this
machine, which carry GPUHERD_RAY_NODE_ID: their actor watches and stops them (a daemon
switched from Ray with --abandon-running leaves them running, as it says).

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
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, ParamSpec, TypeVar

from gpuherd.executors import local_proc
from gpuherd.executors.local_unwatched import Unwatched
from gpuherd.jobfiles import HOOK_VARIABLE, KEY_VARIABLE, RAY_NODE_VARIABLE

log = logging.getLogger("gpuherd.executor")
P = ParamSpec("P")
T = TypeVar("T")

_HOOK_MARK = b"\0" + HOOK_VARIABLE.encode() + b"="
_KEY_MARK = b"\0" + KEY_VARIABLE.encode() + b"="
_RAY_MARK = b"\0" + RAY_NODE_VARIABLE.encode() + b"="

SWEEP_DELAY = 0.1
"""Seconds between a job's end and the pass that kills what escaped its group: one pass of
/proc then serves all the jobs that ended meanwhile (a pass costs ~0.3 ms per 100 processes,
too much to pay for each of a thousand trivial jobs a second)."""
SWEEP_ROUNDS = 5
"""Passes in a row while each still finds something to kill: a process that forks while a
pass runs leaves a child the pass did not see, which the next one kills."""
CLOSE_WAIT = 5.0
"""Seconds a closing executor waits for its last pass (a stuck process must not keep a
daemon or `gpuherd run` from exiting)."""
ASK_WAIT = 5.0
"""Seconds a starting daemon waits for a pass that tells whether a job's processes still run
(a stuck process must not keep it from starting: then it takes them for gone)."""


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


def attempt_key(environment: bytes) -> str | None:
    """The attempt key a job's process carries; None for other processes, for hooks, and for
    the processes of a job the Ray executor runs (jobfiles.RAY_NODE_VARIABLE)."""
    start = environment.find(_KEY_MARK)
    if start < 0 or _HOOK_MARK in environment or _RAY_MARK in environment:
        return None
    start += len(_KEY_MARK)
    return os.fsdecode(environment[start : environment.index(b"\0", start)])


def _signal_pinned(pid: int, signums: Sequence[int], wanted: Callable[[int], bool]) -> bool:
    """Send `signums`, in order, to `pid` if `wanted(pid)` still holds once the process is
    pinned by a pidfd (the pid cannot be taken by another process between the check and the
    signal)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False  # gone meanwhile
    try:
        if wanted(pid):
            for signum in signums:
                signal.pidfd_send_signal(fd, signum)
            return True
    except OSError:
        pass  # ended meanwhile
    finally:
        os.close(fd)
    return False


def signal_attempt(key: str, signums: Sequence[int], group: int = 0) -> int:
    """Send `signums`, in order, to every other process of this attempt (one pass for all),
    except members of `group` (signalled with them already: a second SIGTERM or SIGINT means
    "hurry" to some programs); return how many were signalled."""

    def wanted(pid: int) -> bool:
        try:
            return _carries(key, pid) and os.getpgid(pid) != group
        except OSError:  # ended meanwhile
            return False

    return sum(_signal_pinned(pid, signums, wanted) for pid in _other_pids() if wanted(pid))


def home_processes(home_id: str) -> dict[int, str]:
    """Every other process of a job of this home, with its attempt key."""
    prefix = home_id + ":"
    found = {}
    for pid in _other_pids():
        key = attempt_key(_environment(pid))
        if key is not None and key.startswith(prefix):
            found[pid] = key
    return found


def kill_processes(found: Mapping[int, str]) -> int:
    """SIGKILL these processes if each still carries the key it was found with."""
    return signal_processes(found, (signal.SIGKILL,))


def signal_processes(found: Mapping[int, str], signums: Sequence[int]) -> int:
    """Send `signums` to these processes if each still carries the key it was found with;
    return how many were signalled."""
    signalled = 0
    for pid, key in found.items():
        signalled += _signal_pinned(pid, signums, partial(_carries, key))
    return signalled


def _carries(key: str, pid: int) -> bool:
    return attempt_key(_environment(pid)) == key


def stopped(pid: int) -> bool:
    """Whether the process is stopped by a signal (state T; a debugger's stop, t, is not), or
    waits in vfork for a child stopped so: dash vforks each command, and a group SIGSTOPped
    between the vfork and the exec stops the child, the shell left in state D until the
    child runs on (1 stop in ~80 of a `while ...; do sleep 0.02; done` job)."""
    now = local_proc.stat(pid)
    if now is None or now.state not in (b"T", b"D"):
        return False
    return now.state == b"T" or any(
        child is not None and child.state == b"T"
        for child in map(local_proc.stat, local_proc.children(pid))
    )


def attempt_alive(pgid: int, key: str) -> bool:
    """Whether a process that is not a zombie is left in the job's group or carries its
    attempt key (read from /proc: no kernel event tells when they are gone)."""
    for pid in _other_pids():
        now = local_proc.stat(pid)
        if now is None or not now.alive:
            continue  # gone meanwhile, or dead
        if now.group == pgid or attempt_key(_environment(pid)) == key:
            return True
    return False


def job_in_group(pgid: int, key: str, born_before: int = 0) -> bool:
    """Whether a process that is not a zombie is in group `pgid` and is the job's: it carries
    its attempt key, or started before `born_before` (clock ticks since boot, as /proc counts
    a start), when the group's number was still the job's."""
    for pid in _other_pids():
        now = local_proc.stat(pid)
        if now is None or not now.alive or now.group != pgid:
            continue
        if now.started < born_before or attempt_key(_environment(pid)) == key:
            return True
    return False


def outlived(leader: int, key: str) -> bool:
    """Whether an attempt whose leader has ended still has processes running. No: when a
    live process has the leader's number, which is then another program's, and the job's
    group could not be told from the one it may lead."""
    now = local_proc.stat(leader)
    return (now is None or not now.alive) and attempt_alive(leader, key)


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


def _job_of(key: str) -> int | None:
    """The job id of an attempt's key (`HOME:JOB:ATTEMPT`); None for a damaged key."""
    try:
        return int(key.rsplit(":", 2)[1])
    except (IndexError, ValueError):
        return None


def _log_failure(future: Future[Any]) -> None:
    if (exc := future.exception()) is not None:
        log.warning("a pass over /proc for a job's processes failed: %s", exc)


KnownAttempt = Callable[[int, int], bool]
"""Whether the queue knows attempt N of job J (Store.attempt_known)."""


class LeftoverSweeper:
    """Kills what ended attempts of one home left running: SWEEP_DELAY after it is asked
    (one pass serves all the attempts that ended meanwhile), and again while a pass finds
    something. Which attempts run is read on the event loop, between finding the processes
    (on the scanner's thread) and killing them: an attempt that starts meanwhile is running
    by then. With `known`, only attempts the queue knows count as ended."""

    def __init__(
        self,
        running: Callable[[], Collection[str]],
        scanner: ProcScanner,
        known: KnownAttempt | None = None,
    ) -> None:
        self.home_id = ""
        """Whose leftovers to kill; none until the engine says (LocalExecutor.end_leftovers)."""
        self.spared: frozenset[int] = frozenset()
        """Jobs whose processes are never killed here (end_leftovers says which)."""
        self._running = running
        self._scanner = scanner
        self._known = known
        self._first = True
        """The pass of the daemon's start is still to come."""
        self.unwatched = Unwatched()
        """Attempts the queue did not know at the daemon's start: left alone for good."""
        self._timer: asyncio.TimerHandle | None = None
        self._busy = False
        """A pass is due or under way."""
        self._again = False
        """Asked again meanwhile: what ended since the pass looked needs one more."""
        self._rounds = 0
        self._closed = False
        """Closed: the attempts it watched are left running, and running() says none."""

    def due(self) -> None:
        """Ask for a pass soon (a job ended, or a daemon started)."""
        if not self.home_id or self._closed:
            return
        if self._busy:
            self._again = True
            return
        self._busy = True
        self._timer = asyncio.get_running_loop().call_later(SWEEP_DELAY, self._sweep)

    def begin(self) -> None:
        """The daemon start's pass, waited for (ASK_WAIT at most) where the queue's attempts
        are known: those it does not know, found running, hold their GPUs before anything
        is placed (local_unwatched.py). Not answered in time: it comes later, as any."""
        if self._known is None or self._busy or not self.home_id or self._closed:
            self.due()
            return
        try:
            found = self._scanner.submit(home_processes, self.home_id).result(ASK_WAIT)
        except Exception:  # timed out, or failed (logged)
            self.due()
            return
        self._busy = True
        self._passed(found)

    def _sweep(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        found = self._scanner.submit(home_processes, self.home_id)
        found.add_done_callback(lambda f: call_on_loop(loop, self._kill, f))

    def _kill(self, found: Future[dict[int, str]]) -> None:
        self._passed(None if found.exception() is not None else found.result())

    def _passed(self, found: dict[int, str] | None) -> None:
        """A pass found `found` (None: it failed): kill what ended attempts left."""
        if self._closed:  # a pass under way at the close: every attempt now looks ended
            return
        self._busy = False
        again, self._again = self._again, False
        leftovers = {} if found is None else self._leftovers(found)
        self._first = False
        self.unwatched.seen(found, self.due)
        self._rounds = self._rounds + 1 if leftovers else 0
        if leftovers:
            self._scanner.submit(kill_processes, leftovers)
        if again or (leftovers and self._rounds < SWEEP_ROUNDS):
            self.due()

    def _leftovers(self, found: Mapping[int, str]) -> dict[int, str]:
        running = set(self._running())
        ended = {pid: key for pid, key in found.items() if key not in running}
        if self.spared:  # (a job set aside, whose row cannot be read: it may run on)
            ended = {pid: key for pid, key in ended.items() if _job_of(key) not in self.spared}
        if self._known is None:
            return ended
        return {pid: key for pid, key in ended.items() if self._ended(key, pid)}

    def _ended(self, key: str, pid: int) -> bool:
        """Whether the attempt keyed `key`, which does not run, ended. One the queue does not
        know at the daemon's start did not (see the module's docstring): said, left alone."""
        assert self._known is not None
        if key in self.unwatched:
            return False
        try:
            _, job_id, attempt = key.rsplit(":", 2)
            if self._known(int(job_id), int(attempt)) or not self._first:
                return True
        except Exception as exc:  # a damaged key, a database that fails: kill nothing
            log.warning("cannot tell whether %s ended (%s): left running", key, exc)
            return False
        self.unwatched.spare(key, int(job_id), int(attempt))
        log.warning(
            "job %s attempt %s runs (pid %d), but the database knows no such attempt "
            "(herd.db moved aside, deleted or restored from an older backup): left running, "
            "unwatched",
            job_id,
            attempt,
            pid,
        )
        return False

    def close(self) -> None:
        """Kill what is left now (the loop may not run again), waiting CLOSE_WAIT at most;
        attempts still running (left for the next daemon) keep their processes. A pass
        under way kills nothing once it is done: the executor forgets what it watched."""
        self._closed = True
        self.unwatched.close()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.home_id:
            return
        with contextlib.suppress(Exception):  # timed out, or failed (logged)
            found = self._scanner.submit(home_processes, self.home_id).result(CLOSE_WAIT)
            self._scanner.submit(kill_processes, self._leftovers(found)).result(CLOSE_WAIT)


def call_on_loop(
    loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any
) -> None:
    """Hand a result from another thread to the loop (gone if the loop was closed)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback, *args)
