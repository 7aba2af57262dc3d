"""Run jobs as local processes: one session per job, logs and exit status in the attempt folder.

Each job runs in a small POSIX sh (or $GPUHERD_SHELL) that leads its own session (pid ==
pgid), records its pid and, once the command ends, the command's status in the attempt
folder's `process` file. That file is what lets a restarted daemon learn how a job ended
while it was down (DESIGN principle 4).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from signal import SIGCONT, SIGKILL, SIGTERM

from gpuherd.executors.base import (
    ExitStatus,
    LaunchRequest,
    SignsOfLife,
    SpawnError,
    UnwatchedRuns,
    checked_workdir,
    job_shell,
)
from gpuherd.executors.local_escaped import (
    ASK_WAIT,
    KnownAttempt,
    LeftoverSweeper,
    ProcScanner,
    call_on_loop,
    outlived,
    signal_attempt,
    stopped,
)
from gpuherd.executors.local_groups import group_alive, open_leader, signal_group
from gpuherd.executors.local_late_forks import LateForks
from gpuherd.executors.local_outputs import link_outputs
from gpuherd.executors.local_records import (
    PROCESS_FILE,
    attempt_says,
    ended_as_recorded,
    leaders,
    own_peak,
    read_process_file,
    reap,
    recorded_leader,
    signs_of_life,
    visible_gpus,
)
from gpuherd.executors.local_shell import JOB_SHELL, RESET_SIGNALS, spawn_advice
from gpuherd.fd_limit import restore_in_shell

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
"""os.open rather than open(): no buffered text wrapper on every job's way to its start."""


_GROUP_POLL = 0.05


@dataclass
class _Watch:
    fd: int | None
    """The leader's pidfd, until the job is concluded; None if it ended before it was watched."""
    seen: int
    """When the leader was seen alive (local_groups.boot_ticks); 0: never."""
    attempt_dir: str
    key: str
    on_exit: Callable[[ExitStatus], None]
    loop: asyncio.AbstractEventLoop


def _forget_fd(w: _Watch) -> None:
    if w.fd is not None:
        w.loop.remove_reader(w.fd)
        os.close(w.fd)


class LocalExecutor:
    """Executor for processes on this machine; see the module docstring for the layout."""

    user_files = True

    def __init__(self, known: KnownAttempt | None = None, one_shot: bool = False) -> None:
        """`known`: whether the queue knows an attempt (a job, an attempt number); what
        another one left running is left alone (LeftoverSweeper). `one_shot`: a `gpuherd
        run`'s, whose jobs run in the folder it was started in (it has no --cwd)."""
        self._one_shot = one_shot
        self._watches: dict[int, _Watch] = {}
        self._kill_timers: dict[int, asyncio.TimerHandle] = {}
        # Leaders we SIGKILLed: one not our child cannot be reaped, but we know why it ended.
        self._killed: set[int] = set()
        # Jobs whose leader ended while being stopped, waiting for the rest of their group.
        self._draining: dict[int, _Watch] = {}
        # (job id, attempt) of the children we spawned and have not reaped yet. Right after
        # posix_spawn returns, the child is still inside execve and /proc/<pid>/environ reads
        # empty, so is_running() cannot identify it from its environment; but the pid of an
        # unreaped child of ours cannot have been reused, so this record is exact.
        self._children: dict[int, tuple[int, int]] = {}
        self._spawned: dict[int, tuple[int, float]] = {}
        """own_peak() as each child was spawned (its measured peak is its own above that), and
        the moment before its spawn (its end is not earlier: ended_as_recorded)."""
        # Passes over /proc for what left a job's group, off the event loop (local_escaped.py).
        self._scanner = ProcScanner()
        self._sweeper = LeftoverSweeper(self._attempts_running, self._scanner, known)
        self._late = LateForks()  # a signal that reaches a shell as it starts its command
        self._leaders: dict[str, int] | None = None
        """The attempts' leaders found by a restart's one pass (find_leader)."""
        self._closed = False
        """Closed: the jobs run on, for the next daemon; none is signalled from here."""

    def _attempts_running(self) -> set[str]:
        return {w.key for w in (*self._watches.values(), *self._draining.values())}

    # -- launch ------------------------------------------------------------------------

    def launch(self, request: LaunchRequest) -> int:
        cwd = checked_workdir(request.cwd, request.job_id, self._one_shot)
        attempt_dir = request.attempt_dir
        try:
            # The job's shell writes its pid and exit status here; on a full disk it could
            # not, and the job would end with no status at all: find that out before starting.
            fd = os.open(os.path.join(attempt_dir, PROCESS_FILE), _NEW_FILE, 0o644)
            try:
                os.write(fd, b"pid 0\n")
            finally:
                os.close(fd)
        except OSError as e:
            raise SpawnError(
                f"starting job {request.job_id}: cannot write in {attempt_dir}: "
                f"{e.strerror or e}; free some disk space or fix the folder's permissions"
            ) from e
        link_outputs(request)  # (--output, --error: files of the user's choosing)
        # The child opens the logs itself, so the daemon never holds (or leaks) their fds.
        shell = job_shell(request.env)
        script = restore_in_shell() + JOB_SHELL  # (not the daemon's raised fd limit)
        argv = [shell, "-c", script, "gpuherd-job", request.command, cwd, attempt_dir]
        spawned_at = time.time()
        try:
            pid = os.posix_spawn(
                shell,
                argv,
                dict(request.env),
                setsid=True,
                setsigmask=(),
                setsigdef=RESET_SIGNALS,
            )
        except ValueError as e:  # what posix_spawn refuses in the environment or argv
            raise SpawnError(f"starting job {request.job_id}: {e}") from e
        except OSError as e:  # its fork or exec (the shell opens the logs: not a folder's)
            raise SpawnError(
                f"starting job {request.job_id} (attempt {request.attempt}): cannot start its "
                f"shell {shell}: {e.strerror or e}; {spawn_advice(e.errno)}"
            ) from e
        self._children[pid] = (request.job_id, request.attempt)
        self._late.launched(pid, shell)
        self._spawned[pid] = (own_peak(), spawned_at)
        return pid

    # -- watch -------------------------------------------------------------------------

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        if pid in self._watches:
            raise ValueError(f"pid {pid} is already being watched")
        loop = asyncio.get_running_loop()
        # No pidfd: ended (and reaped) before we looked, e.g. while no daemon ran: as if now;
        # a stop the last daemon had begun (terminate, next) lets it finish its grace.
        fd, seen = open_leader(pid)
        self._watches[pid] = _Watch(fd, seen, attempt_dir, key, on_exit, loop)
        if fd is None:
            loop.call_soon(self._on_leader_exit, pid)
        else:
            loop.add_reader(fd, self._on_leader_exit, pid)

    def _on_leader_exit(self, pid: int) -> None:
        w = self._watches.pop(pid, None)
        if w is None:
            return
        if w.fd is not None:
            w.loop.remove_reader(w.fd)  # (its pidfd is closed with the job: _conclude)
        if pid in self._kill_timers:
            # Being stopped: the job's shell has ended, but processes the command started
            # may still be saving a checkpoint. They get the rest of their grace.
            self._draining[pid] = w
            self._poll_group(pid)
            return
        self._conclude(pid, w)

    def _conclude(self, pid: int, w: _Watch) -> None:
        timer = self._kill_timers.pop(pid, None)
        if timer is not None:
            timer.cancel()
        self._late.forget(pid)  # (before the pidfd it signals through is closed)
        # Kill stragglers, through the leader's pidfd: a leader re-attached after a restart
        # is not our child, and once its group has emptied its number may name another
        # program's group (local_groups.py). What left the group: the sweeper's pass.
        self._kill_group(pid, w)
        if w.fd is not None:  # (no longer read: _on_leader_exit stopped that)
            os.close(w.fd)
        self._sweeper.due()
        w.on_exit(self._exit_status(pid, w.attempt_dir))

    def _poll_group(self, pid: int) -> None:  # (only while a stopped job's stragglers last)
        w = self._draining.get(pid)
        if w is None:
            return
        alive = self._scanner.submit(group_alive, pid, w.fd, w.key)
        alive.add_done_callback(partial(call_on_loop, w.loop, self._polled, pid))

    def _polled(self, pid: int, alive: Future[bool]) -> None:
        w = self._draining.get(pid)
        if w is None:
            return
        if alive.exception() is None and not alive.result():
            del self._draining[pid]
            self._conclude(pid, w)
            return
        w.loop.call_later(_GROUP_POLL, self._poll_group, pid)

    def _exit_status(self, pid: int, attempt_dir: str) -> ExitStatus:
        peak, spawned_at = self._spawned.pop(pid, (0, 0.0))
        from_wait = reap(pid, peak)
        self._children.pop(pid, None)
        killed_by_us = pid in self._killed
        self._killed.discard(pid)
        # Our own child's wait status is the shell's, which exits with the status it records,
        # ended when it recorded it; the file alone tells of a job re-attached after a restart.
        if from_wait is not None:
            return ended_as_recorded(from_wait, attempt_dir, spawned_at)
        recorded = read_process_file(attempt_dir)[1]
        if recorded is not None:
            return recorded
        if killed_by_us:
            return ExitStatus(exit_code=None, signal=SIGKILL, ended_at=time.time())
        return ExitStatus(exit_code=None, signal=None, ended_at=time.time())

    # -- inspect -----------------------------------------------------------------------

    def is_running(
        self, pid: int, job_id: int, attempt: int, key: str, attempt_dir: str = ""
    ) -> bool:
        # The environment tells a job apart from an unrelated process that got the same pid
        # (after a reboot, or once pids wrapped around), or another home's job.
        import psutil  # deferred: ~6 ms at import, needed only when a restart finds live jobs

        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            spawned = self._unreaped_child(pid)
            if spawned is not None:
                return spawned == (job_id, attempt)
            if (said := attempt_says(proc.environ(), key)) is not None:
                return said
            created = proc.create_time()
        except psutil.Error:
            return False
        return bool(attempt_dir) and recorded_leader(pid, created, attempt_dir)

    def given_gpus(self, pid: int) -> tuple[int, ...] | None:
        import psutil  # deferred, as in is_running

        try:
            return visible_gpus(psutil.Process(pid).environ())
        except psutil.Error:
            return None

    def end_leftovers(
        self, home_id: str, spared: Collection[int] = (), unwatched: UnwatchedRuns | None = None
    ) -> None:
        # Found by their environment: a group whose number was taken again is never touched.
        # Called last in a recovery: its pass of leaders is done.
        self._leaders = None
        self._sweeper.home_id, self._sweeper.spared = home_id, frozenset(spared)
        self._sweeper.unwatched.tell = unwatched
        self._sweeper.begin()

    def find_leader(self, job_id: int, attempt: int, key: str) -> int | None:
        if self._leaders is None:  # nothing is spawned during a recovery: one pass serves it
            self._leaders = leaders()
        return self._leaders.get(key)

    def stopped(self, pid: int) -> bool:
        return stopped(pid)  # (/proc/PID/stat: never waits on a stuck process)

    def outlived(self, pid: int, key: str) -> bool:
        try:  # on the scanner's thread: a stuck process must not keep the daemon from starting
            return self._scanner.submit(outlived, pid, key).result(ASK_WAIT)
        except Exception:  # timed out, or failed (logged): as before, taken for gone
            return False

    def _unreaped_child(self, pid: int) -> tuple[int, int] | None:
        spawned = self._children.get(pid)
        if spawned is None:
            return None
        try:
            # WNOWAIT: only asks whether it is still our child, leaving any status to watch().
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # someone else reaped it: the pid may name another process
            del self._children[pid]
            self._spawned.pop(pid, None)
            return None
        return spawned

    def recorded_exit(self, attempt_dir: str) -> ExitStatus | None:
        return read_process_file(attempt_dir)[1]

    def recorded_pid(self, attempt_dir: str) -> int | None:
        return read_process_file(attempt_dir)[0]

    def signs_of_life(self, attempt_dir: str) -> SignsOfLife:
        return signs_of_life(attempt_dir)

    # -- control -----------------------------------------------------------------------

    def signal(self, pid: int, signum: int) -> None:
        self._signal(pid, signum)

    def _signal(self, pid: int, *signums: int) -> None:
        if pid <= 0:  # killpg(0) would signal the daemon's own group
            raise ValueError(f"not a job's process group: {pid}")
        if self._closed:  # a stop asked as the daemon stopped: the jobs are the next one's
            return
        w = self._watches.get(pid) or self._draining.get(pid)
        fd = None if w is None else w.fd
        late = None if fd is None else self._late.plan(pid, signums)
        try:
            for signum in signums:
                self._signal_group(pid, w, signum)
        finally:  # (the plan holds pidfds)
            if late is not None and fd is not None:
                self._late.signalled(pid, fd, late)
        if w is not None:  # and what left the group (local_escaped.py), in one pass, in order
            self._scanner.submit(signal_attempt, w.key, signums, group=pid)

    def _signal_group(self, pid: int, w: _Watch | None, signum: int) -> None:
        if w is not None:
            signal_group(pid, signum, w.fd, w.key, w.seen, self._scanner)
        elif pid in self._children:  # launched, not watched yet: our unreaped child's number
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signum)
        # Else it was concluded, its group killed then: the number may be another's by now.

    def _kill_group(self, pid: int, w: _Watch | None) -> None:
        with contextlib.suppress(PermissionError):
            self._signal_group(pid, w, SIGKILL)

    def out_of_reach(self, pid: int) -> str | None:
        """None: a job on this machine is always in reach of a signal."""
        return None

    def terminate(
        self, pid: int, grace: float, begun: bool = False, sent: Callable[[], object] | None = None
    ) -> None:
        if self._closed:
            return
        if not begun:
            # SIGCONT too: a paused (SIGSTOPped) job would not act on SIGTERM until resumed.
            self._signal(pid, SIGCONT, SIGTERM)
            if sent is not None:
                sent()
        old = self._kill_timers.pop(pid, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._kill_timers[pid] = loop.call_later(grace, self._kill_after_grace, pid)

    def _kill_after_grace(self, pid: int) -> None:
        # Here: the leader is still there, its stragglers run on after it, or it is unwatched.
        self._kill_timers.pop(pid, None)
        if pid in self._watches:
            self._killed.add(pid)
        w = self._draining.pop(pid, None)
        self._kill_group(pid, w or self._watches.get(pid))
        if w is not None:
            self._conclude(pid, w)

    def close(self) -> None:
        self._closed = True
        self._late.close()
        self._sweeper.close()
        self._scanner.close()
        for w in (*self._watches.values(), *self._draining.values()):
            _forget_fd(w)
        self._watches.clear()
        self._draining.clear()
        for timer in self._kill_timers.values():
            timer.cancel()
        self._kill_timers.clear()
