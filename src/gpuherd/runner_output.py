"""`gpuherd run`'s output folder: made (a fresh one when none is given), and held.

Held: two runs into one folder at once wrote into each other's job folders (one stdout.log
mixing both, one run's job.json, the other's failure recorded nowhere).

A run holds an exclusive flock on OUTPUT/.gpuherd-run.lock for its whole life: the kernel
releases it when the run ends, however it ends (kill -9 too). A second run into the folder is
refused before it starts anything, naming the pid the holder wrote in the file. The file goes
at the run's end (a run killed leaves it, and the next run takes it over): a later run into
the folder finds the folder as the earlier one left it. Where no lock can be had (a file
system without locks), the run goes on unguarded, as it did. A folder we cannot write in is
refused first (check_writable): each job would fail as it starts, leaving nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from gpuherd.core.text import shell_word
from gpuherd.errors import HerdError
from gpuherd.runner_watchdog import KILL_GRACE, STOPPING

LOCK_NAME = ".gpuherd-run.lock"


@contextlib.contextmanager
def output_held(folder: Path, typed: str | None = None) -> Iterator[int | None]:
    """Hold `folder` (which exists; `typed` so on the command line) for this run until the
    block ends; HerdError, one line, when another run holds it. Gives the lock's descriptor
    (None: unguarded), for the run's watchdog to hold too (runner_watchdog.py)."""
    fd = _take(folder / LOCK_NAME, typed if typed is not None else str(folder))
    try:
        yield fd
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(folder / LOCK_NAME)  # while still held: see _take
            os.close(fd)


def _take(path: Path, folder: str) -> int | None:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise HerdError(
                    f"--output-dir {shell_word(folder)} is in use by another gpuherd run "
                    f"({holder}): give another --output-dir, or wait until that run has ended"
                ) from None
            return None  # no locks here (ENOLCK, EOPNOTSUPP): run as before
        # The run that held it may have removed the file between our open and our lock: the
        # lock is then on a file nobody else will open. Take the one at the path instead.
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        except OSError:
            same = False
        if same:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
            return fd
        os.close(fd)


def _holder(fd: int) -> str:
    """`pid N` (`pid N on HOST` for another host), as the holder wrote it; else unnamed. A
    killed run's watchdog says it stops the jobs that run left (runner_watchdog.py)."""
    try:
        pid, _, host = os.pread(fd, 300, 0).decode("utf-8", "replace").strip().partition(" ")
    except OSError:
        return "its pid unknown"
    if not pid.isdigit():  # it has not written it yet
        return "its pid unknown"
    host, _, stopping = host.partition(" ")
    holder = f"pid {pid}" if host in ("", socket.gethostname()) else f"pid {pid} on {host}"
    if stopping == STOPPING:
        holder += f", stopping the jobs of a run that was killed: {KILL_GRACE:g}s at most"
    return holder


def check_writable(folder: Path, typed: str | None = None) -> None:
    """HerdError, one line, for an existing `folder` (`typed` so on the command line) this
    process cannot make job folders in (chmod a-w, a read-only mount, /proc): else every job
    fails in turn, each with the same line. Tried, not asked: os.access says yes to root for
    /proc and /sys, where no folder can be made."""
    try:
        tried = tempfile.mkdtemp(prefix=".gpuherd-run-try-", dir=folder)
    except OSError as exc:
        name = shell_word(typed if typed is not None else str(folder))
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise HerdError(
                f"--output-dir {name}: cannot write in it (read-only, or not yours); give a "
                "folder you can write to, or make it writable (chmod u+w)"
            ) from None
        raise HerdError(
            f"--output-dir {name}: cannot make a job folder in it ({exc.strerror or exc}); "
            "give a folder you can write to"
        ) from None
    with contextlib.suppress(OSError):
        os.rmdir(tried)


def make_output_dir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HerdError(
            f"--output-dir {shell_word(str(folder))}: cannot create it: {exc.strerror or exc}; "
            "give a folder you can write to"
        ) from None


def drop_fresh_run_dir(folder: Path) -> None:
    """Remove the herd_runs/<timestamp> fresh_run_dir() made, and herd_runs, where empty: a
    run of nothing (an input of comments) left an empty folder for every try."""
    for empty in (folder, folder.parent):
        with contextlib.suppress(OSError):  # (not empty: something of its own, kept)
            empty.rmdir()


def holds_logs(folder: Path) -> bool:
    """Whether `folder` holds more than this run's lock (a job folder, herd.db): a new run
    folder that does not is removed as the run ends (drop_fresh_run_dir), so the summary
    must not name it for the logs: the user looked there in vain."""
    try:
        with os.scandir(folder) as entries:
            return any(entry.name != LOCK_NAME for entry in entries)
    except OSError:
        return False


def fresh_run_dir() -> Path:
    """herd_runs/<timestamp>, made now; -2, -3, ... after it when a run started in the same
    second has it: two runs must never write into each other's job folders."""
    base = Path("herd_runs") / time.strftime("%Y%m%d-%H%M%S")
    folder, n = base, 1
    try:
        base.parent.mkdir(exist_ok=True)
        while True:
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                n += 1
                folder = base.with_name(f"{base.name}-{n}")
    except OSError as exc:  # (named as it failed: herd_runs itself, or its new folder)
        failed = str(folder) if exc.filename is None else os.fsdecode(exc.filename)
        raise HerdError(
            f"cannot create {failed}: {exc.strerror}; run from a folder you can write to, "
            "or pass --output-dir"
        ) from None
