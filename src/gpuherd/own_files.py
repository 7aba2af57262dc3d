"""Files a job writes and reads back in its own folder (a pickled task, its parameters, its
return value), where that folder may be one other users can write: a `folder=` of the
user's choosing, a sweep's results folder someone else made first.

Such a user could plant a link under the name written next (a write would then go to a file
of the victim's choosing), or replace a file read back (a pickle: their code, run as the
victim). So a write makes a new file (never through a link found there) and renames it into
place; a read of code refuses a file that is not this user's own, whole file, writable by
them alone.

Standard library only: the worker imports it before the user's module (worker.py).
"""

from __future__ import annotations

import contextlib
import os
import stat

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_OWN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # (a planted fifo: no hang)


class NotYourOwnFile(Exception):
    """A file to read is not one only this user could have written; the message says why."""


def replace_file(path: str | os.PathLike[str], data: bytes, mode: int = 0o666) -> None:
    """Write `data` as `path`, whole or not at all: a new `.tmp` file (`mode`, less the
    umask), renamed over `path`. OSError for the caller to word."""
    tmp = f"{os.fspath(path)}.tmp"
    with contextlib.suppress(FileNotFoundError):  # a crash's, or a link someone planted
        os.unlink(tmp)
    fd = os.open(tmp, _NEW_FILE, mode)
    try:
        write_whole(fd, data)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)


def read_own_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of `path`, if it is a regular file (not a link) this user owns that neither
    group nor others may write. NotYourOwnFile saying which it is not; FileNotFoundError when
    there is none; another OSError when it cannot be read."""
    try:
        fd = os.open(path, _READ_OWN)
    except OSError:
        if os.path.islink(path):  # ELOOP (or EMLINK on some systems): O_NOFOLLOW refused it
            raise NotYourOwnFile(f"{os.fspath(path)} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(fd)  # the file opened, not whatever the name is by now
        if not stat.S_ISREG(found.st_mode):
            raise NotYourOwnFile(f"{os.fspath(path)} is not a regular file")
        if found.st_uid != os.getuid():
            raise NotYourOwnFile(
                f"{os.fspath(path)} belongs to another user (uid {found.st_uid}), not to you "
                f"(uid {os.getuid()})"
            )
        if found.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            mode = stat.S_IMODE(found.st_mode)
            raise NotYourOwnFile(f"{os.fspath(path)} is writable by others (mode {mode:04o})")
        return file.read()


def others_link(path: str) -> tuple[str, int] | None:
    """The first symbolic link on the way to `path` (its folders, then itself) that another
    user owns (root's, the system's, are trusted), with its owner; None when there is none.
    The links of this user are followed as the kernel would, and the walk ends at the first
    part that does not exist yet. A file written through another user's link is one they
    chose: planted in a folder they can write, such a link turns a job's output file into a
    file of yours (`--output` in a shared folder), written over."""
    me = os.getuid()
    pending = os.path.abspath(path).split("/")
    done, hops = "/", 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        try:
            found = os.lstat(here)
        except OSError:  # none yet (made later), or not to be looked at: the open says why
            return None
        if not stat.S_ISLNK(found.st_mode):
            done = here
            continue
        if found.st_uid not in (me, 0):
            return here, found.st_uid
        hops += 1
        if hops > 40:  # a loop of links: the open says so (ELOOP)
            return None
        try:
            target = os.readlink(here)
        except OSError:  # gone since: the open says what is there now
            return None
        if target.startswith("/"):
            done = "/"
        pending[:0] = target.split("/")
    return None


def write_whole(fd: int, data: bytes) -> None:
    """Write all of `data`, or raise OSError: a disk filling up writes what fits and refuses
    only the next write, so one os.write left a file cut short, moved over a good one."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
