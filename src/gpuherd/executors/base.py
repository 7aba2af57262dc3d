"""The executor port: how the engine starts, watches and stops a job's processes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpuherd.core.model import HostUsage
from gpuherd.core.output_files import OutputFile

SHELL_VARIABLE = "GPUHERD_SHELL"
DEFAULT_SHELL = "/bin/sh"


class SpawnError(Exception):
    """The command could not be started; the message names the path or cause and what to do."""


RUN_FOLDER_GONE = (
    "the run's jobs run in the folder gpuherd run was started in; create it again, or run "
    "again from an existing folder"
)
"""What to do about a `gpuherd run` job whose working folder is gone (removed while the run
went on): `run` has no --cwd, its jobs run where it was started."""


def checked_workdir(cwd: str, job_id: int, one_shot: bool) -> str:
    """The absolute path of a job's working folder, or SpawnError saying what to do: it is
    gone or cannot be entered (`one_shot`: a `gpuherd run`'s, which has no --cwd). Said of a
    job submitted from it, the folder removed since: the advice of a new submission, "submit
    from an existing folder or pass --cwd", was no way out."""
    cwd = os.path.abspath(cwd)
    if not os.path.isdir(cwd):
        todo = RUN_FOLDER_GONE if one_shot else _elsewhere(job_id)
        raise SpawnError(f"working directory {cwd} does not exist: {todo}")
    if not os.access(cwd, os.X_OK):
        todo = "fix its permissions" + ("" if one_shot else " or pass another --cwd")
        raise SpawnError(f"working directory {cwd} cannot be entered (permission denied): {todo}")
    return cwd


def _elsewhere(job_id: int) -> str:
    """How a job whose folder is gone runs again: there, or in another folder."""
    return (
        f"make it again, then `gpuherd retry {job_id}`; or run it in another folder: "
        f"`gpuherd retry --hold {job_id} && gpuherd edit {job_id} --cwd DIR && gpuherd "
        f"release {job_id}`"
    )


class NotStarted(SpawnError):
    """The job could not start there and then, through no fault of its own (a cluster node
    that left between placement and start): it goes back to the queue with its retries."""


UnwatchedRuns = Callable[[Mapping[tuple[int, int], Sequence[int]]], None]
"""Told which attempts of the home that the queue did not know at the daemon's start, left
running, still run: (job id, attempt) -> the pids of their processes (Executor.end_leftovers)."""


def job_shell(env: Mapping[str, str]) -> str:
    """The shell a job's command runs in: $GPUHERD_SHELL in the job's environment (bash, for
    `source` and `[[ ]]`; found on the job's PATH), else /bin/sh. SpawnError if it is not a
    program."""
    name = env.get(SHELL_VARIABLE)
    if not name:
        return DEFAULT_SHELL
    path = name if os.path.isabs(name) else shutil.which(name, path=env.get("PATH", os.defpath))
    if path is None or os.path.isdir(path) or not os.access(path, os.X_OK):
        raise SpawnError(
            f"{SHELL_VARIABLE}={name} is not a program here: set it to a POSIX shell such as "
            "bash (or its path), or unset it for /bin/sh"
        )
    return path


@dataclass(frozen=True)
class LaunchRequest:
    job_id: int
    attempt: int
    command: str
    cwd: str
    env: Mapping[str, str]
    """The complete environment of the job (gpuherd's variables already set)."""
    attempt_dir: str
    """Existing folder for this attempt: logs, pid and exit status are written here."""
    outputs: tuple[OutputFile | None, OutputFile | None] = (None, None)
    """The files of the user's choosing stdout and stderr go to (`--output`, `--error`);
    None: the attempt folder's stdout.log and stderr.log."""


@dataclass(frozen=True)
class ExitStatus:
    """How a job's process ended. Both codes None = it vanished without a recorded status."""

    exit_code: int | None
    signal: int | None
    ended_at: float
    unstarted: Exception | None = None
    """Set when the attempt never started after all: what its `launch` would have raised
    (NotStarted: queued again; else it fails as spawn_error). For an executor whose start
    goes on after `launch` returned (Ray: the actor's creation waits on the cluster)."""
    why: str = ""
    """Of a lost end, what the executor knows of its cause (a Ray node that died), in the
    words its history gives after `lost: `; "": it does not know."""
    usage: HostUsage | None = None
    """What the job's processes used of this machine, where the executor waited for them
    itself (a local job's shell, its own child); None where it did not (re-attached after a
    restart, a cluster's), or where a signal killed that shell (reap says why)."""

    @property
    def lost(self) -> bool:
        return self.exit_code is None and self.signal is None and self.unstarted is None


@dataclass(frozen=True)
class SignsOfLife:
    """What an executor knows of when an attempt ended that a restart found gone with no exit
    status recorded (lost: SIGKILLed, or the machine restarted, while no daemon watched it);
    None where it does not know (a cluster's attempt, on a machine gpuherd does not see)."""

    last_seen: float | None
    """The last write of the attempt's processes to its folder (its logs, its process file):
    it was alive then."""
    booted: float | None
    """When the machine it ran on last booted: an attempt begun before had ended by then."""


UNKNOWN_SIGNS = SignsOfLife(None, None)

RAY_PLACE_FILE = "ray.json"
"""What the Ray executor writes in each attempt's folder as it launches it, before its actor
exists (where it was placed): here, not in executors/ray.py, which imports Ray, so that a
daemon of another executor tells an attempt that ran on a cluster (engine_recovery.py)."""


NO_USER_FILES = (
    "output and error (--output, --error) are not taken by a daemon that runs jobs on a Ray "
    "cluster: a job's output is written on its node, and `gpuherd log` serves it; drop them"
)
"""Why an executor whose jobs cannot write this machine's files refuses them."""


class Executor(Protocol):
    user_files: bool
    """Whether its jobs can write to files named on this machine (`--output`, `--error`)."""

    def launch(self, request: LaunchRequest) -> int:
        """Start the job in its own process group; return its pid. Raises SpawnError (an
        executor that finishes the start off the event loop may tell it later instead,
        through `watch`: ExitStatus.unstarted)."""
        ...

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        """Call `on_exit` once, on the event loop, when the job has ended (no polling), or is
        found never to have started (ExitStatus.unstarted). `key` is the attempt's
        (Layout.attempt_key), which all its processes carry. A job being stopped
        (`terminate`) has ended once the rest of its processes have too, or its grace has run
        out. A leader already gone counts as one that ends right after this call (a
        `terminate` in the same step of the loop lets its other processes drain)."""
        ...

    def is_running(
        self, pid: int, job_id: int, attempt: int, key: str, attempt_dir: str = ""
    ) -> bool:
        """True when `pid` is alive and is that attempt of that job, of this home (`key`): not
        a reused pid, nor another home's job of the same number. An executor that cannot
        tell in time (a cluster that does not answer) says True, and `watch` finds out:
        counted lost on a guess, the job could run twice."""
        ...

    def given_gpus(self, pid: int) -> tuple[int, ...] | None:
        """The GPUs the running attempt `pid` was given (as gpuherd set CUDA_VISIBLE_DEVICES
        in its environment at its start); None where that cannot be read."""
        ...

    def stopped(self, pid: int) -> bool:
        """True when the attempt's leader `pid` is stopped by a signal (SIGSTOP); False when
        it is not, or where that cannot be told (a cluster's)."""
        ...

    def outlived(self, pid: int, key: str) -> bool:
        """True when the attempt's leader `pid` has ended (no other process took its number)
        but processes of that attempt (left in its group, or carrying `key`) still run."""
        ...

    def end_leftovers(
        self, home_id: str, spared: Collection[int] = (), unwatched: UnwatchedRuns | None = None
    ) -> None:
        """Kill what this home's attempts that ended left running (processes they started in
        the background), those that ended while no daemon watched too, and from now on what
        each attempt leaves at its end. Called once, when the engine starts. The processes
        of the jobs `spared` are left alone: running jobs whose rows cannot be read, not
        watched, yet not ended (engine_damaged.py). So are those of attempts the queue does
        not know (herd.db moved aside, deleted or restored): `unwatched` is told which run,
        before this returns, then each time that changes (engine_unwatched.py)."""
        ...

    def recorded_exit(self, attempt_dir: str) -> ExitStatus | None:
        """The exit status written to the attempt's folder, if any (readable after a restart)."""
        ...

    def recorded_pid(self, attempt_dir: str) -> int | None:
        """The pid written to the attempt's folder before or as it started, if any."""
        ...

    def signs_of_life(self, attempt_dir: str) -> SignsOfLife:
        """For an attempt found gone with no exit status recorded: when it was last seen
        alive, and when its machine booted (core.recovery.lost_end makes its end of them)."""
        ...

    def find_leader(self, job_id: int, attempt: int, key: str) -> int | None:
        """The live process that leads this attempt of this job of this home (`key`), found
        without a recorded pid (the daemon died within moments of spawning it, before
        anything was written)."""
        ...

    def signal(self, pid: int, signum: int) -> None:
        """Send `signum` to the job's whole process group; a job already gone is no error."""
        ...

    def out_of_reach(self, pid: int) -> str | None:
        """Why the running attempt `pid` cannot be stopped now (a cluster that does not
        answer); None while it can. A daemon stopping with --kill does not wait for such an
        attempt: its stop is stored, and the next daemon carries it out."""
        ...

    def terminate(
        self, pid: int, grace: float, begun: bool = False, sent: Callable[[], object] | None = None
    ) -> None:
        """SIGTERM to the group (SIGCONT too, if it was paused), SIGKILL after `grace` s. With
        `begun`, an earlier daemon sent the SIGTERM: only the SIGKILL is left to arm (a second
        SIGTERM means "hurry, skip the checkpoint" to some programs). `sent` is called once the
        SIGTERM went: at once for a job here, once its actor took it for one on Ray (never,
        if it could not go: stop_signals.py notes it then)."""
        ...

    def close(self) -> None:
        """Stop watching; running jobs are left running."""
        ...
