"""The daemon's last word for a failure none of its own checks foresaw: a module it needs that
does not import (a broken install: a package missing, or another one of that name first on
PYTHONPATH), or a bug. It died with a traceback alone, and `daemon start` could only say "the
daemon exited with status 1; see daemon.log". The traceback stays in the log, for whoever
debugs it; the one line says what failed and what to do."""

from __future__ import annotations

import errno
import os
import traceback
from pathlib import Path


def os_failure(exc: OSError, home: Path) -> str:
    """A file the start could not write or read, as Python words it (`[Errno 13] Permission
    denied: '...'`), but a full disk, which a failed write says without the file's name (a
    daemon killed on a full disk started again with `[Errno 28] No space left on device`
    alone): where, and what to do. Where is the named file's folder when the failure names
    one (the socket's under XDG_RUNTIME_DIR, a --log-file elsewhere), else the home."""
    if exc.errno == errno.ENOSPC:
        return full_disk(Path(os.fsdecode(exc.filename)).parent if exc.filename else home)
    return str(exc)


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


def unexpected_failure(exc: Exception, log: Path) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name == "ray":
        # A daemon started for a Ray cluster (--address, --executor ray, or remembered from
        # the last start) by an install without the extra: nothing to reinstall, one to add.
        return (
            "Ray is not installed: pip install 'gpuherd[ray]' to run jobs on a Ray cluster, "
            "or start with --executor local to run them on this machine"
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
