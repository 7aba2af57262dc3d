"""The git commit a job is submitted from: recorded in its job (`show`, job.json), and in each
sweep point's params.json.

Each git runs in a process group of its own, which a timeout kills whole, and so does a
process that stops meanwhile (`Gits.stop`: a daemon's stop, `gpuherd run`'s end): a git
left running had gone on past its timeout, which only the thread waiting for it enforced, for
as long as a large repository's `git status` takes. (GIT_OPTIONAL_LOCKS=0: git takes no
lock of the index that a kill could leave behind.) A process killed (`kill -9`, the OOM
killer) stops nothing: its gits die with it as the kernel sees it end (`dies_with_us`)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping

GIT_TIMEOUT = 3.0
"""Seconds each of the two git calls may take (a large repository's cold `git status`)."""
UNKNOWN = "+unknown"
"""After the sha when `git status` failed or ran out of time: clean or changed, nobody knows."""

Ran = subprocess.CompletedProcess[str]
PARENT_DEATH_KILLS = ("--pdeathsig", "KILL", "--")
"""util-linux's setpriv: the kernel sends the process SIGKILL as the thread that started it
ends (prctl PR_SET_PDEATHSIG, kept across its exec of git)."""


@functools.cache
def dies_with_us() -> tuple[str, ...]:
    """What each git runs through so that it dies with the thread that started it, which
    waits for it to end (GitLookups' thread: it ends before its git only as the process is
    killed): setpriv, which sets the signal and execs git, so that no Python runs between
    the fork and the exec (a `preexec_fn` calling prctl may deadlock in a process with
    threads, and forks the whole process instead of spawning). Nothing where setpriv is
    missing or has no --pdeathsig (not Linux, busybox): there a killed process's gits run on
    till they end (their jobs' commits are looked up again all the same: job_commits.py)."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if setpriv is None:
        return ()
    try:
        tried = subprocess.run(
            [setpriv, *PARENT_DEATH_KILLS, "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return (setpriv, *PARENT_DEATH_KILLS) if tried.returncode == 0 else ()


class Stopped(Exception):
    """The git was killed, or not started, because its process stops (`Gits.stop`)."""


class Gits:
    """The git processes running for a set of lookups, which `stop` kills (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._killed: set[subprocess.Popen[str]] = set()
        self.stopped = False

    def run(self, args: list[str], env: Mapping[str, str], timeout: float) -> Ran | None:
        """`args` run and waited for (None: it could not start, or ran out of time: killed);
        Stopped once `stop` was called, or if it killed this one. On this thread, which
        waits for it: it dies with the thread (dies_with_us), and so with the process."""
        through = dies_with_us()  # (found once: a run of setpriv, before the first git)
        with self._lock:  # (started under it: `stop` kills every git started)
            if self.stopped:
                raise Stopped
            try:
                process = subprocess.Popen(
                    [*through, *args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                    start_new_session=True,
                )
            except (OSError, subprocess.SubprocessError, ValueError):  # (ValueError: a NUL)
                return None
            self._running.add(process)
        try:
            done: tuple[str, str] | None = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.wait()
            done = None
        finally:
            killed = self._forget(process)
        if killed:
            raise Stopped  # (its output, cut short, is no answer)
        return (
            None if done is None else subprocess.CompletedProcess(args, process.returncode, *done)
        )

    def _forget(self, process: subprocess.Popen[str]) -> bool:
        """Whether `stop` killed it (it ended, or its thread gave up on it)."""
        for pipe in (process.stdout, process.stderr):  # (left open by a timeout)
            if pipe is not None:
                pipe.close()
        with self._lock:
            self._running.discard(process)
            killed = process in self._killed
            self._killed.discard(process)
        return killed

    def stop(self) -> None:
        """Kill the gits running (each with its process group) and start no more."""
        with self._lock:
            self.stopped = True
            self._killed |= self._running
            for process in self._running:
                _kill(process)


def _kill(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:  # (not reaped yet: its pid is still its group's)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)


def git_commit(
    cwd: str, path: str | None = None, timeout: float = GIT_TIMEOUT, gits: Gits | None = None
) -> str | None:
    """The commit checked out in `cwd`, with "+dirty" when tracked files changed, "+unknown"
    when `git status` could not say; None outside a git work tree (or without git on `path`).
    Untracked files do not count: a sweep's own results folder inside the repository would
    make every resubmission dirty. Stopped when `gits` stopped before git answered."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    if path is not None:  # the submitter's PATH: their git
        env["PATH"] = path
    running = gits or Gits()

    def git(*args: str) -> Ran | None:
        return running.run(["git", "-C", cwd, *args], env, timeout)

    head = git("rev-parse", "--verify", "HEAD")
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    if status is None or status.returncode != 0:
        return head.stdout.strip() + UNKNOWN
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")
