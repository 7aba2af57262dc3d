"""The daemon's last word for a failure none of its own checks foresaw: a module it needs that
does not import (a broken install: a package missing, or another one of that name first on
PYTHONPATH), or a bug. It died with a traceback alone, and `daemon start` could only say "the
daemon exited with status 1; see daemon.log". The traceback stays in the log, for whoever
debugs it; the one line says what failed and what to do."""

from __future__ import annotations

import errno
import os
import shlex
import traceback
from pathlib import Path

from gpuherd.errors import HerdError
from gpuherd.paths import FILE_IN_THE_WAY


def os_failure(exc: OSError, home: Path) -> str:
    """A file the start could not write or read, as Python words it (`[Errno 13] Permission
    denied: '...'`), but a full disk, which a failed write says without the file's name (a
    daemon killed on a full disk started again with `[Errno 28] No space left on device`
    alone): where, and what to do. Where is the named file's folder when the failure names
    one (the socket's under XDG_RUNTIME_DIR, a --log-file elsewhere), else the home."""
    if exc.errno == errno.ENOSPC:
        return full_disk(Path(os.fsdecode(exc.filename)).parent if exc.filename else home)
    return _file_failure(exc, home)


AGAIN = "then `gpuherd daemon start` again"


def _file_failure(exc: OSError, home: Path) -> str:
    """Any other failure, said of its file with what to do: Python's own words (`[Errno 21]
    Is a directory: '…/daemon.lock'`) named neither the fault nor the way out."""
    named = exc.filename2 if exc.errno == errno.EISDIR and exc.filename2 else exc.filename
    if not named:
        return f"cannot start in {home} ({exc.strerror or exc}): check it, {AGAIN}"
    path = Path(os.fsdecode(named))
    quoted = shlex.quote(str(path))
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EISDIR:
        return (
            f"{path} is a folder, where the daemon keeps a file of that name: move it aside "
            f"(`mv {quoted} {shlex.quote(str(path) + '.aside')}`), {AGAIN}"
        )
    if exc.errno == errno.ENOENT and (target := _link_target(path)):
        return (
            f"{path} is a link to {target}, which does not exist: remove the link "
            f"(`rm {quoted}`: the daemon makes its own file), {AGAIN}"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (
            f"cannot write {path} ({reason}): make it yours and writable (`ls -l {quoted}` "
            f"shows whose it is; `lsattr` shows an immutable one), or point GPUHERD_HOME at "
            f"a folder of yours; {AGAIN}"
        )
    if exc.errno == errno.EROFS:
        return (
            f"cannot write {path}: its disk is read-only: remount it read-write, or point "
            f"GPUHERD_HOME at a folder on a writable disk; {AGAIN}"
        )
    if exc.errno == errno.ENOTDIR:
        return f"cannot open {path}: {FILE_IN_THE_WAY}: move that file aside, {AGAIN}"
    return f"cannot use {path} ({reason}): fix it or move it aside, {AGAIN}"


def refuse_a_database_not_a_file(database: Path) -> None:
    """herd.db a folder, or a link into a folder that does not exist: SQLite said only "unable
    to open database file" and to check that it exists. (A link to a file not made yet, in a
    folder that exists, is a queue to be made there: SQLite makes it.)"""
    if database.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(database))
    target = _link_target(database)
    if target is None or database.exists():
        return
    folder = (database.parent / target).parent
    if folder.is_dir():
        return
    # Not "remove the link" first, as for the daemon's other files: the queue may be on a
    # disk that is not mounted, and a new one in the home would hide it.
    raise HerdError(
        f"{database} is a link to {target}, whose folder {folder} does not exist (a disk not "
        f"mounted?): mount it, or make the folder for a new queue there (`mkdir -p "
        f"{shlex.quote(str(folder))}`), or remove the link for a new queue in the home "
        f"(`rm {shlex.quote(str(database))}`); {AGAIN}"
    )


def _link_target(path: Path) -> str | None:
    """Where `path` leads, if it is a link (None: no link, or gone since)."""
    try:
        return os.readlink(path)
    except OSError:
        return None


def full_disk(where: Path) -> str:
    return (
        f"the disk holding {where} is full: free some space on it, then `gpuherd daemon "
        "start` again"
    )


def silent_exit(log: Path, logged: int, code: int) -> str:
    """Why a daemon exited without a last word, as `daemon start` says it. On a full disk it
    could not write one (nor a byte of its log): "see daemon.log" named an empty file."""
    try:
        wrote = log.stat().st_size > logged
    except OSError:
        wrote = False
    if not wrote and _no_room(log.parent):
        return full_disk(log.parent)
    return f"the daemon exited with status {code}; see {log}"


def _no_room(folder: Path) -> bool:
    """Whether the disk holding `folder` has no block, or no inode, left to write."""
    try:
        disk = os.statvfs(folder)
    except OSError:
        return False
    return disk.f_bavail == 0 or (disk.f_files > 0 and disk.f_favail == 0)


RAY_INSTALL = (
    "pip install 'ray[default]>=2.60,<3' in gpuherd's Python (in its checkout: pip install -e "
    "'.[ray]')"
)
"""How Ray is added to an install without it. Not `pip install 'gpuherd[ray]'`: no package of
that name is on PyPI (gpuherd installs from its checkout or a wheel), and should one appear,
that would install someone else's."""


def unexpected_failure(exc: Exception, log: Path) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name == "ray":
        # A daemon started for a Ray cluster (--address, --executor ray, or remembered from
        # the last start) by an install without the extra: nothing to reinstall, one to add.
        return (
            f"Ray is not installed: {RAY_INSTALL} to run jobs on a Ray cluster, or start "
            "with --executor local to run them on this machine"
        )
    if isinstance(exc, ImportError):
        module, where = _unimportable(exc)
        said = str(exc)
    elif broken := _broken_module(exc):  # (a half-written file, one that raises as it runs)
        (module, where), said = broken, f"{type(exc).__name__}: {exc}"
    else:
        failed = f"the daemon failed: {type(exc).__name__}: {exc}"
        return f"{failed} (a bug: please report it, with the traceback in {log})"
    source = f" ({where})" if where else ""
    return (
        f"cannot import {module}{source}: {said}; reinstall gpuherd, or fix PYTHONPATH "
        f"(the traceback is in {log})"
    )


def _broken_module(exc: Exception) -> tuple[str, str] | None:
    """The module not of gpuherd whose import raised `exc`, and its file: one Python could
    not compile (a SyntaxError in it), or one that raised as its code ran (a frame of its
    module's own code); None: no import failed, or gpuherd's own did (a bug)."""
    ours = str(Path(__file__).parent) + os.sep
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith(ours):
        source = Path(exc.filename)
        return (source.parent.name if source.stem == "__init__" else source.stem), exc.filename
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        file = frame.f_code.co_filename
        if frame.f_code.co_name == "<module>" and not file.startswith((ours, "<")):
            return str(frame.f_globals.get("__name__", file)), file
    return None


def _unimportable(exc: ImportError) -> tuple[str, str | None]:
    """The module that did not import, and its file when known. Python names a module it
    cannot find (`No module named 'uvicorn'`); one that raised as it ran is the first frame
    of the traceback outside gpuherd and Python's import machinery."""
    if exc.name:
        return exc.name, exc.path
    ours = str(Path(__file__).parent) + os.sep  # (the daemon runs as __main__: by its file)
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        file = frame.f_code.co_filename
        if not file.startswith((ours, "<frozen")):
            return str(frame.f_globals.get("__name__", file)), file
    return "a module the daemon needs", None
