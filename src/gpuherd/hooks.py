"""The on-end hook: a shell command the daemon runs each time a job that ran ends
(`gpuherd config set on-end CMD`), as task-spooler's TS_ONFINISH and pueue's callback do.

It listens to the engine's changes (each one, published once committed) and reads the
ended job from the store. Hooks run apart from the jobs and from the engine's tick: at most
PARALLEL at once (those the last daemon left running counted), each in its own session,
killed after `timeout`; a hook that fails is logged in daemon.log. Each run's output goes
to a file of its own in hooks.running/, locked while any of its processes holds it (a child
left in the background too); once none does (the hook and its children ended, or at most
`timeout` after the hook started, or after the next daemon's start, for one the last left
running) it is appended to hooks.log with at most HEAD + TAIL of its bytes and its escape
sequences dropped, and removed. hooks.log is rotated past ROTATE_AT: thousands of jobs with
a chatty notifier filled the disk.

When a hook starts, its job is marked (Store.hook_started, with its attempt): hooks still
waiting when the daemon stops or dies run at its next start (the jobs that ended after
THROUGH, when the command was set, and are not marked), each once, whatever the order or
the moments the jobs ended in. A hook that had started goes on by itself (its own session)
and is not run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import tempfile
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path

from gpuherd.broadcast import Change
from gpuherd.core.env_vars import fitted
from gpuherd.core.model import Attempt, Job
from gpuherd.core.states import ACTIVE_STATES, FINISHED_STATES
from gpuherd.core.text import ascii_digits, one_line
from gpuherd.engine import Engine
from gpuherd.executors.base import SpawnError, job_shell
from gpuherd.executors.local_shell import RESET_SIGNALS
from gpuherd.fd_limit import restore_in_shell
from gpuherd.hook_files import (
    free_middle,
    held,
    kill_left,
    named_by_pid,
    still_running,
    write_out,
    write_out_ended,
)
from gpuherd.paths import HOOK_LOG
from gpuherd.saved_settings import HOOKS_THROUGH, parse_hooks_through
from gpuherd.store import Store

log = logging.getLogger("gpuherd.hooks")

RUNNING = "hooks.running"
"""The folder of the output files of hooks that have not been written to hooks.log yet."""
PARALLEL = 4
"""Hooks running at once: a sweep whose points all fail together must not fork hundreds (nor
a daemon restarted in the middle of them twice as many: the last one's still running count)."""
TIMEOUT = 60.0
"""Seconds a hook may run before its whole process group is killed."""
THROUGH = HOOKS_THROUGH
"""The setting holding when the on-end command was set: jobs that ended before, never hooked.
(Before the per-job marks, the end time of the job whose hook started last: the same bound.)"""
POLL = 0.2
"""Seconds between looks at the output files that a hook's background processes still hold."""


def hooks_from_now(store: Store) -> None:
    """A new on-end command runs for jobs that end from now on, none that ended before."""
    store.set_setting(THROUGH, repr(time.time()))


# $1 = the hook's command, $2 = the home (where the hook runs): passed as arguments, never
# quoted into the script. Its output goes to its file in RUNNING (posix_spawn's doing).
_HOOK_SHELL = r"""
exec </dev/null
cd -- "$2" || exit 127
__gpuherd_hook=$1
shift 2
eval "$__gpuherd_hook"
"""


def hook_env(
    base: Mapping[str, str],
    job: Job,
    attempt_dir: str,
    job_dir: str,
    left: int,
    last: Attempt | None = None,
) -> dict[str, str]:
    """The daemon's environment and what the hook is told of the job (docs: Notifications).
    `last`, the job's last attempt, tells the GPUs and time of a job that no longer carries
    them: one cancelled while it waited to retry (its run was put back) had empty ones."""
    outcome = job.outcome
    env = {k: v for k, v in base.items() if k != "GPUHERD_TOKEN"}
    gpus, started, ended = job.gpus, job.started_at, job.ended_at
    if started is None and last is not None:
        gpus, started, ended = last.gpus, last.started_at, last.ended_at
    seconds = ended - started if started and ended else 0
    env.update(
        GPUHERD_JOB_ID=str(job.id),
        GPUHERD_JOB_NAME=job.spec.name or "",
        GPUHERD_JOB_STATE=job.state.value,  # jobfiles.HOOK_VARIABLE: marks a hook
        GPUHERD_JOB_OUTCOME=outcome.kind.value if outcome else "",
        GPUHERD_JOB_EXIT_CODE=""
        if outcome is None or outcome.exit_code is None
        else str(outcome.exit_code),
        GPUHERD_JOB_DETAIL=outcome.describe() if outcome else "",
        GPUHERD_JOB_COMMAND=fitted("GPUHERD_JOB_COMMAND", job.spec.command),
        GPUHERD_JOB_PROJECT=job.spec.project or "",
        GPUHERD_JOB_SWEEP=job.spec.sweep or "",
        GPUHERD_JOB_SECONDS=f"{max(0.0, seconds):.1f}",
        GPUHERD_JOB_GPUS=",".join(str(i) for i in gpus),
        GPUHERD_ATTEMPT=str(job.attempt),
        GPUHERD_JOB_DIR=job_dir,
        GPUHERD_ATTEMPT_DIR=attempt_dir,
        GPUHERD_JOBS_LEFT=str(left),
    )
    return env


_FIX_HOOK = "gpuherd config get on-end shows it; gpuherd config set on-end none turns it off"
_NOT_RUN = {
    126: f": its shell could not run the command (not executable?); {_FIX_HOOK}",
    127: f": its shell did not find the command (a script removed or moved?); {_FIX_HOOK}",
}
"""What the hook's shell's own exit codes mean, added to daemon.log's line: every job's end
logged a bare `exited 127` once the hook's script was removed."""


def _last_attempt(store: Store, job: Job) -> Attempt | None:
    """The record of the job's last attempt (its number), if there is one."""
    return next((a for a in store.attempts(job.id) if a.number == job.attempt), None)


class EndHooks:
    """Runs the engine's policy's `on_end` command for every job that ran and ended."""

    def __init__(
        self, engine: Engine, home: Path, timeout: float = TIMEOUT, parallel: int = PARALLEL
    ) -> None:
        self.engine = engine
        self.log_path = str(home / HOOK_LOG)
        self.run_folder = str(home / RUNNING)
        self.home = str(home)
        self.timeout = timeout
        self.parallel = parallel
        self._waiting: deque[tuple[str, Job, dict[str, str]]] = deque()
        self._running: dict[int, tuple[int, int, asyncio.TimerHandle, str, float]] = {}
        """Hook pid -> (pidfd, job id, its kill timer, its output file, its time's end)."""
        self._held: dict[str, tuple[int, float, bool]] = {}
        """Output files of ended hooks still held by their background processes -> (job id,
        the hook's time's end, on the monotonic clock, whether it was killed at that end)."""
        self._left: set[str] = set()
        """Output files (in _held) of hooks the last daemon left running whose shell still
        runs: each takes one of the `parallel` places until it ends."""
        self._poll: asyncio.TimerHandle | None = None
        self._killed: set[int] = set()
        self._stopped = False
        self._loop = asyncio.get_running_loop()  # built on the daemon's loop

    @property
    def running(self) -> int:
        """Hooks running now."""
        return len(self._running)

    def start(self) -> None:
        """Follow the changes now (before the engine finishes jobs that ended while it was
        down), after queueing the hooks the last daemon had not started. A change is
        published once committed: the job is read as it was recorded."""
        self._take_up_left()
        command, store = self.engine.policy.on_end, self.engine.store
        through = parse_hooks_through(store.get_setting(THROUGH))  # (mended at start)
        if command and through is None:
            hooks_from_now(store)
        elif command and through is not None:
            for job in store.hooks_due(through):
                self._queue(command, job.id)
        self.engine.changes.listen(self._heard)

    def _take_up_left(self) -> None:
        """The output files the last daemon's hooks left in hooks.running/: those of hooks
        that ended are written out now, and those still held are followed as this daemon's
        own (written out once free, or `timeout` from now; their middle freed meanwhile):
        they waited for yet another daemon start, and grew on the disk until then."""
        write_out_ended(self.run_folder, self.log_path)
        time_up = time.monotonic() + self.timeout
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(self.run_folder):
                job_id = name.removeprefix("job").partition("-")[0]  # (_spawn's name)
                if ascii_digits(job_id):
                    path = os.path.join(self.run_folder, name)
                    self._held[path] = (int(job_id), time_up, False)
        self._left = still_running(self._held)
        if self._held:
            self._poll = self._loop.call_later(POLL, self._write_out_closed)

    def stop(self) -> None:
        """Run nothing more; hooks still running go on by themselves (own sessions)."""
        self._stopped = True
        for fd, _, timer, _, _ in self._running.values():
            self._loop.remove_reader(fd)
            os.close(fd)
            timer.cancel()
        self._running.clear()
        if self._poll is not None:  # the files still held: the next start writes them out
            self._poll.cancel()
        self._held.clear()
        self._left.clear()
        if self._waiting:
            log.warning("%d on-end hooks left for the next daemon start", len(self._waiting))
            self._waiting.clear()

    def _heard(self, change: Change) -> None:
        command = self.engine.policy.on_end
        if change.get("event") == "config":
            self._drop_unset()
        elif command and not self._stopped and change.get("state") in FINISHED_STATES:
            # After the tick: starting a hook must not delay the next job's start.
            self._loop.call_soon(self._queue, command, change.get("id"))

    def _drop_unset(self) -> None:
        """Forget the waiting runs of a command that is no longer set: `on-end none` stops
        what a hanging or noisy hook left queued behind it (a sweep's thousand ends), as a
        daemon restarted after the change would not run them either."""
        command = self.engine.policy.on_end
        kept = deque(waiting for waiting in self._waiting if waiting[0] == command)
        if dropped := len(self._waiting) - len(kept):
            log.warning(
                "on-end changed: %d hooks of the command set before, still waiting their "
                "turn, were not run",
                dropped,
            )
        self._waiting = kept

    def _queue(self, command: str, job_id: object) -> None:
        if self._stopped or command != self.engine.policy.on_end:
            return  # (the setting changed since the job ended: see _drop_unset)
        store = self.engine.store
        job = store.get_job(job_id) if isinstance(job_id, int) else None
        if job is None or job.state not in FINISHED_STATES or job.attempt == 0:
            return  # not recorded after all, or never ran (cancelled while queued)
        layout = self.engine.layout
        env = hook_env(
            os.environ,
            job,
            str(layout.attempt_dir(job, job.attempt)),
            str(layout.job_dir(job)),
            store.count_jobs(tuple(ACTIVE_STATES)),
            None if job.started_at else _last_attempt(store, job),
        )
        self._waiting.append((command, job, env))
        self._start_waiting()

    def _start_waiting(self) -> None:
        free = self.parallel - self._still_left()
        while self._waiting and len(self._running) < free:
            command, job, env = self._waiting.popleft()
            self.engine.store.hook_started(job.id, job.attempt)
            try:
                self._spawn(command, job.id, env)
            except (OSError, ValueError, SpawnError) as exc:
                log.warning("on-end hook for job %d could not start: %s", job.id, exc)

    def _still_left(self) -> int:
        """How many hooks the last daemon left running still run: places taken."""
        if self._left:
            self._left = still_running(path for path in self._left if path in self._held)
        return len(self._left)

    def _spawn(self, command: str, job_id: int, env: dict[str, str]) -> None:
        shell = job_shell(env)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        header = f"--- {stamp} job {job_id} {env['GPUHERD_JOB_STATE']}: {one_line(command)}\n"
        os.makedirs(self.run_folder, exist_ok=True)
        out, path = tempfile.mkstemp(prefix=f"job{job_id}-", dir=self.run_folder)
        try:
            os.write(out, header.encode())
            # Held by the hook's stdout and stderr (this open file) until its last process
            # is gone: a later daemon writes out only the files no hook holds.
            fcntl.flock(out, fcntl.LOCK_EX)
            script = restore_in_shell() + _HOOK_SHELL  # (as a job's: fd_limit.py)
            argv = [shell, "-c", script, "gpuherd-hook", command, self.home]
            to_file = [(os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, out, 2)]
            pid = os.posix_spawn(
                shell,
                argv,
                env,
                file_actions=to_file,
                setsid=True,
                setsigmask=(),
                setsigdef=RESET_SIGNALS,  # as a job's: `... | head` ends its writer
            )
        except BaseException:
            os.unlink(path)
            raise
        finally:
            os.close(out)
        path = named_by_pid(path, pid)
        fd = os.pidfd_open(pid)
        timer = self._loop.call_later(self.timeout, self._kill, pid)
        self._running[pid] = (fd, job_id, timer, path, time.monotonic() + self.timeout)
        self._loop.add_reader(fd, self._ended, pid)
        if self._poll is None:  # (its output's middle is freed as it grows: free_middle)
            self._poll = self._loop.call_later(POLL, self._write_out_closed)

    def _kill(self, pid: int) -> None:
        if pid in self._running:
            log.warning(
                "on-end hook for job %d ran longer than %gs and was killed",
                self._running[pid][1],
                self.timeout,
            )
            self._killed.add(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def _ended(self, pid: int) -> None:
        fd, job_id, timer, path, time_up = self._running.pop(pid)
        self._loop.remove_reader(fd)
        os.close(fd)
        timer.cancel()
        # A hook killed at its time: said in its output, not taken for background processes
        # still running (its killed ones may not have closed the file yet).
        self._held[path] = (job_id, time_up, pid in self._killed)
        self._write_out_closed()
        try:
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:
            code = 0  # reaped elsewhere: nothing to say of it
        if code != 0 and pid not in self._killed:
            log.warning(
                "on-end hook for job %d %s (its output is in %s)%s",
                job_id,
                f"exited {code}" if code > 0 else f"died of signal {-code}",
                self.log_path,
                _NOT_RUN.get(code, ""),
            )
        self._killed.discard(pid)
        self._start_waiting()

    def _write_out_closed(self) -> None:
        """Write out the output files of ended hooks that no process holds any more; free
        the middle of those still written to (every POLL seconds while a hook runs).

        A hook's background child (`notify-send ... &`, `(sleep 1; echo late) &`) may write
        after the hook's shell ended: its file is kept until the child closed it too, looked
        at every POLL seconds, but no longer than the hook's own time. The child is not
        killed then (it may be meant to outlive the hook); what it writes later is lost."""
        if self._poll is not None:  # (called when a hook ends, too: one timer at a time)
            self._poll.cancel()
            self._poll = None
        now = time.monotonic()
        for _, job_id, _, path, _ in self._running.values():
            try:
                free_middle(path)
            except OSError as exc:
                log.warning("cannot free the disk space of job %d's hook output: %s", job_id, exc)
        for path, (job_id, time_up, killed) in list(self._held.items()):
            try:
                still = held(path)
                if still and now < time_up:
                    free_middle(path)
                    continue
                if still and not killed:  # one the last daemon left running, at its time
                    killed = kill_left(path, job_id, self.timeout)
                note = self._killed_note() if killed else self._late_note() if still else ""
                write_out(path, self.log_path, note)
            except OSError as exc:
                log.warning("cannot write out the output of job %d's hook: %s", job_id, exc)
            del self._held[path]
        if (self._held or self._running) and not self._stopped:
            self._poll = self._loop.call_later(POLL, self._write_out_closed)
        if self._waiting and self._left:  # (one the last daemon left running may have ended)
            self._start_waiting()

    def _killed_note(self) -> str:
        """hooks.log's last line for a hook that ran past its time (daemon.log says it too)."""
        return f"… the hook still ran after {self.timeout:g}s: killed, with its process group"

    def _late_note(self) -> str:
        """hooks.log's last line for a run whose background processes outlived its time."""
        return (
            f"… the hook's background processes still ran after {self.timeout:g}s: what "
            "they print from then on is not kept"
        )
