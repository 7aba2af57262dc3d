"""An attempt's folder found already there, that another user could have put there.

A job's folder may be one others can write (a sweep's results folder someone else made
first, a `gpuherd run --output-dir` in a shared place). There, someone could plant a link as
`attempt-2` while attempt 1 runs: the retry's shell would write its `process` file and its
logs, and gpuherd its attempt.json and markers, into the folder the link names (a folder of
the job user's, written as them). Or a folder of theirs, where they could plant links in
turn. Such an entry is moved aside, and the attempt gets a new folder of its own
(jobfiles.prepare). Only a start that finds its folder there pays for the check (one lstat).
"""

from __future__ import annotations

import os
import stat
import time


def not_ours(folder: str | os.PathLike[str]) -> str | None:
    """What `folder` is, when it is not a folder (not a link to one) of this user's:
    `a symbolic link to /x`, `a folder of another user's (uid 65534)`; None when it is one."""
    found = os.lstat(folder)
    if stat.S_ISLNK(found.st_mode):
        return f"a symbolic link to {os.readlink(folder)}"
    if not stat.S_ISDIR(found.st_mode):
        return "not a folder"
    if found.st_uid != os.getuid():
        return f"a folder of another user's (uid {found.st_uid})"
    return None


def planted(folder: str) -> str | None:
    """not_ours of a job's folder that is there (one lstat), else None: one replaced (a sweep
    point's, in a results folder others can write) had attempt-N made through it, and
    job.json and the markers written where it led."""
    try:
        return not_ours(folder)
    except FileNotFoundError:
        return None


def replace_planted(
    folder: str | os.PathLike[str], what: str, attempt: str | os.PathLike[str] | None = None
) -> None:
    """Move `folder` (`what` it is: not_ours) aside, make a new one in its place, and say so
    first thing in the stderr.log (which the job's shell appends to) of the new folder, or of
    `attempt`, the attempt's folder made in it (a job's folder replaced: a sweep point's).
    OSError if it cannot be moved (a sticky folder: theirs to remove) or is planted again."""
    path = os.fspath(folder)
    aside = f"{path}.not-yours-{time.time_ns()}"
    os.rename(path, aside)  # (moves the link itself, never what it names)
    os.mkdir(path)
    if attempt is not None:
        os.mkdir(attempt)
        path = os.fspath(attempt)
    where = os.fspath(folder)
    note = (
        f"gpuherd: {where} was {what}, which another user could have put there to have this "
        f"attempt write into it: moved aside as {aside}; this attempt has a new folder. Keep "
        "the job's folder writable by you alone\n"
    )
    fd = os.open(
        os.path.join(path, "stderr.log"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644
    )
    try:
        os.write(fd, note.encode())
    finally:
        os.close(fd)
