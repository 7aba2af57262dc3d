"""An on-end hook run's output file in hooks.running/ (hooks.py starts the hooks): locked
while any of the hook's processes holds it, its middle freed while it grows, and appended to
hooks.log once none does, with at most HEAD + TAIL of its bytes and its escape sequences
dropped."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
from collections.abc import Iterable
from typing import BinaryIO

from gpuherd.core.text import clean_lines
from gpuherd.file_holes import free_range

log = logging.getLogger("gpuherd.hooks")

HEAD = TAIL = 4096
"""Bytes of a hook run's output kept from its start and its end; the rest is left out."""
ROTATE_AT = 10 * 2**20
"""hooks.log's size past which it becomes hooks.log.1 (the one before is removed)."""


def _plain(data: bytes) -> str:
    """A hook's output as hooks.log keeps it: its colours and cursor moves were stored raw,
    and replayed by `cat hooks.log`."""
    return clean_lines(data.decode(errors="replace"))


def _capped(f: BinaryIO, size: int) -> str:
    """The `size` bytes from `f`'s position, HEAD and TAIL of them when more."""
    if size <= HEAD + TAIL:
        return _plain(f.read(size))
    head = _plain(f.read(HEAD))
    f.seek(size - HEAD - TAIL, os.SEEK_CUR)
    tail = _plain(f.read(TAIL))
    cut = "" if head.endswith("\n") else "\n"
    return f"{head}{cut}… {size - HEAD - TAIL:,} bytes left out …\n{tail}"


def held(run_file: str) -> bool:
    """Whether a process of the hook (its shell, or a child it left in the background) still
    holds its output file: the file's lock goes with the hook's stdout and stderr."""
    with open(run_file, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def free_middle(run_file: str) -> None:
    """Give back the disk space of the part of a hook's output that hooks.log leaves out
    (all but its header, its first HEAD and its last TAIL bytes so far) while the hook still
    writes: a hook printing at the disk's speed (`cat` of a job's 50 GiB log, `yes`) filled
    the disk in its 60 s. A hole keeps the file's size: the hook's writes go on after it."""
    with open(run_file, "rb") as f:
        start = len(f.readline()) + HEAD
        size = os.fstat(f.fileno()).st_size
    free_range(run_file, start, size - TAIL)


def write_out(run_file: str, log_path: str, note: str = "") -> None:
    """Append a hook run's file (its header line, then its output, capped; then `note` on a
    line of its own) to hooks.log, rotated first when it would grow past ROTATE_AT; then
    remove the file."""
    with open(run_file, "rb") as f:
        header = f.readline().decode(errors="replace")
        size = os.fstat(f.fileno()).st_size - f.tell()  # (a background child may add more)
        output = _capped(f, size)
    if output and not output.endswith("\n"):
        output += "\n"
    entry = (header + output + (f"{note}\n" if note else "")).encode()
    with contextlib.suppress(FileNotFoundError):
        if os.path.getsize(log_path) + len(entry) > ROTATE_AT:
            os.replace(log_path, log_path + ".1")
    with open(log_path, "ab") as log_file:
        log_file.write(entry)
    os.unlink(run_file)


def write_out_ended(folder: str, log_path: str) -> None:
    """Write out the files in `folder` whose hooks ended (no process holds their lock): those
    of hooks that were running when the last daemon stopped."""
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            try:
                if not held(path):  # (else its hook still runs)
                    write_out(path, log_path)
            except OSError as exc:
                log.warning("cannot write out the hook output %s: %s", path, exc)


def named_by_pid(run_file: str, pid: int) -> str:
    """The run file renamed after its hook's pid (`job12-x1y2-pid345`): a next daemon kills,
    at its time, a hook the last one left running. As it was where it cannot be renamed."""
    named = f"{run_file}-pid{pid}"
    try:
        os.rename(run_file, named)
    except OSError:
        return run_file
    return named


def holding_hook(run_file: str) -> int | None:
    """The pid in the run file's name, if that process still has the file open: the hook's
    shell (or what it exec'd), not a process that took the pid after the hook ended."""
    pid = run_file.rpartition("-pid")[2]
    if not pid.isdigit():
        return None
    try:
        ours = os.stat(run_file)
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        with contextlib.suppress(OSError):
            theirs = os.stat(f"/proc/{pid}/fd/{fd}")
            if (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino):
                return int(pid)
    return None


def still_running(run_files: Iterable[str]) -> set[str]:
    """Those of `run_files` whose hook's shell still holds them (holding_hook): hooks a last
    daemon left running, which still take their places among the hooks run at once."""
    return {path for path in run_files if holding_hook(path) is not None}


def kill_left(path: str, job_id: int, timeout: float) -> bool:
    """Kill, with its process group, the hook whose output is `path` if it still runs: one
    the last daemon left running, `timeout` after this one started (this daemon's own were
    killed at their time, and left no shell holding their file)."""
    pid = holding_hook(path)
    if pid is None:
        return False
    log.warning(
        "on-end hook for job %d, left running by the last daemon, still ran %gs after this "
        "one started: killed",
        job_id,
        timeout,
    )
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return True
