"""The daemon's hold on its home: one daemon per home, however its files are cleaned up.

It holds two flocks for its life. One on `daemon.lock`, where it notes its pid: what clients
name it by, and the only one an older gpuherd's daemon holds (a start of this version is still
refused by one left running by an upgrade). But a file can be unlinked: a "stale lock" clean-up
removed it, the next start made a new one, took it, and a second daemon served the same herd.db,
giving each GPU to two jobs at once. So it also holds one on the home folder itself (an fd
opened on it), which cannot be unlinked while it holds files. A removed daemon.lock is put
back by the daemon at its next look at its socket (HomeLock.mend). Kept light: the client
reads folder_lock_holder (daemon_presence.lock_holder) on its error path.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shlex
import time
from pathlib import Path
from typing import IO

from gpuherd import paths
from gpuherd.errors import HerdError

log = logging.getLogger("gpuherd.daemon")

LOCKS_TABLE = "/proc/locks"
PID_NOTED_WITHIN = 1.0
"""Seconds a start refused by a taken daemon.lock waits for the daemon holding it to note its
pid there: one that has just won the lock notes it at once, unless the machine is busy."""


class AlreadyRunning(HerdError):
    pass


class HomeLock:
    """A daemon's two locks on its home (see the module's docstring); closed, both go."""

    def __init__(self, home: Path, file: IO[str], folder: int) -> None:
        self.home = home
        self._file = file
        self._folder = folder
        self._said = False

    def mend(self) -> None:
        """Put daemon.lock back (its pid noted, locked) if it was removed or replaced: clients
        name the daemon by it, and an older gpuherd's start is refused by it alone. One that
        another process holds (a start on its way to being refused by the folder's lock) is
        left to the next look."""
        # Looked up in the folder held, not by path: a home renamed meanwhile gets it back too.
        path, name = paths.lock_file(self.home), paths.lock_file(self.home).name
        with contextlib.suppress(OSError):
            found = os.stat(name, dir_fd=self._folder)
            if _identity(found) == _identity(os.fstat(self._file.fileno())):
                return
        handle = None
        try:
            handle = open(name, "a+", opener=self._in_folder)  # noqa: SIM115 (held for life)
            if not _take(handle):
                handle.close()
                return
            note_pid(handle)
        except OSError as exc:  # (a folder put there, a full disk: said once, not at every look)
            if handle is not None:
                handle.close()
            if not self._said:
                log.warning("%s was removed and cannot be put back: %s", path, exc)
            self._said = True
            return
        self._file.close()
        self._file, self._said = handle, False
        log.warning("%s was removed while the daemon ran: put back", path)

    def _in_folder(self, name: str, flags: int) -> int:
        return os.open(name, flags, 0o666, dir_fd=self._folder)  # (open()'s own mode)

    def close(self) -> None:
        self._file.close()
        with contextlib.suppress(OSError):
            os.close(self._folder)


def acquire_lock(home: Path) -> HomeLock:
    """Hold the home for the daemon's life (both locks, released by the kernel at its end);
    AlreadyRunning if a daemon holds either."""
    home.parent.mkdir(parents=True, exist_ok=True)  # the folders above: the umask's mode
    home.mkdir(mode=0o700, exist_ok=True)
    handle = paths.lock_file(home).open("a+")
    if not _take(handle):
        try:
            raise AlreadyRunning(_lock_taken(home, handle))
        finally:
            handle.close()
    folder = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # the lock file taken was a new one: the running daemon's removed
        os.close(folder)
        handle.close()  # (the file made stays: that daemon takes it at its next look)
        raise AlreadyRunning(lock_file_removed(home, folder_lock_holder(home))) from None
    except BaseException:
        os.close(folder)
        handle.close()
        raise
    note_pid(handle)
    return HomeLock(home, handle, folder)


def lock_file_removed(home: Path, pid: int | None) -> str:
    """The one line refusing a start whose home a daemon (`pid`, if found) holds, though its
    daemon.lock was removed. Begins as daemon_presence.ALREADY_RUNNING: a start that lost."""
    which = "" if pid is None else f" (pid {pid})"
    return (
        f"a daemon is already running for {home}{which}, though its lock file "
        f"{paths.lock_file(home)} was removed (it puts it back within seconds): "
        "`gpuherd daemon status` shows it, `gpuherd daemon stop` stops it"
    )


def _lock_taken(home: Path, handle: IO[str]) -> str:
    """Why a start is refused by a daemon.lock another process holds: this home's daemon (it
    notes its pid there as it takes it), or another program (`flock daemon.lock ...`), which
    was said to be a daemon under the pid of the last one, dead, that `daemon stop` then said
    did not run. A daemon that won a start's race notes its pid a moment after: waited for."""
    held = os.fstat(handle.fileno())
    deadline = time.monotonic() + PID_NOTED_WITHIN
    while True:
        handle.seek(0)
        noted = handle.read().strip()
        if noted.isdecimal() and holds_open(int(noted), held):
            return (
                f"a daemon is already running for {home} (pid {noted}): "
                "`gpuherd daemon status` shows it, `gpuherd daemon stop` stops it"
            )
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    lock = paths.lock_file(home)
    holder = flock_holder(held)
    who = (
        f"pid {holder}: {_command_of(holder)}"
        if holder is not None
        else f"`fuser -v {shlex.quote(str(lock))}` names it"
    )
    end = f"end it (`kill {holder}`)" if holder is not None else "end it"
    return (
        f"another program holds the daemon's lock file {lock} ({who}): no gpuherd daemon runs "
        f"for {home}, and none can start while it holds it: {end} or wait until it lets go, "
        "then `gpuherd daemon start` again"
    )


def _command_of(pid: int) -> str:
    """A process's command line, cut short, to name it by."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return "gone since"
    command = " ".join(os.fsdecode(b" ".join(words)).split())  # (one line: a `-c` script's)
    return command if len(command) <= 60 else command[:57] + "..."


def note_pid(handle: IO[str]) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()


def folder_lock_holder(home: Path) -> int | None:
    """The pid of the process that holds the flock on the home folder (a daemon whose
    daemon.lock was removed); None when none does, or it cannot be told (no /proc)."""
    try:
        home_stat = os.stat(home)
    except OSError:
        return None
    return flock_holder(home_stat)


def flock_holder(held: os.stat_result) -> int | None:
    """The pid of the process that holds a flock on the file `held` (None: none, or it cannot
    be told). The kernel's table of locks names the holder by pid and inode; the holder is
    then confirmed by an fd of its open on the file (the table's device number is not always
    stat()'s: btrfs subvolumes)."""
    try:
        with open(LOCKS_TABLE, encoding="ascii", errors="replace") as f:
            table = f.read()
    except OSError:
        return None
    # A line: "12: FLOCK  ADVISORY  WRITE 4711 fd:01:1234 0 EOF" (one waiting: "12: -> FLOCK")
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK" or not fields[4].isdecimal():
            continue
        if fields[5].rpartition(":")[2] != str(held.st_ino):
            continue
        if holds_open(int(fields[4]), held):
            return int(fields[4])
    return None


def holds_open(pid: int, held: os.stat_result) -> bool:
    """Whether the process `pid` (one of this user's) has the file `held` open."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        names = os.listdir(fds)
    except OSError:  # no such process (or not ours)
        return False
    for name in names:
        try:
            found = os.stat(fds / name)
        except OSError:  # closed since the listing
            continue
        if _identity(found) == _identity(held):
            return True
    return False


def _take(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _identity(found: os.stat_result) -> tuple[int, int]:
    return found.st_dev, found.st_ino
