"""The dashboard's token file, GPUHERD_HOME/ui_token (mode 0600): kept across restarts, so
that a restart does not log every open tab out, and made again by `ui --new-token`."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat
from pathlib import Path

from gpuherd.env_token import TOKEN_SHAPE
from gpuherd.errors import DiskFull, HerdError
from gpuherd.paths import TOKEN_FILE

log = logging.getLogger("gpuherd.listener")


def token_path(home: Path) -> Path:
    return home / TOKEN_FILE


def kept_token(home: Path) -> str | None:
    """The token the last daemon wrote to GPUHERD_HOME/ui_token, to keep a restart from
    logging every open tab out: only from a regular file of this user's, with no bit for
    group or others, that holds one token. Another file there is removed (logged), and a new
    token is made; a folder there fails the start, as it did (daemon_failure names it)."""
    path = token_path(home)
    why: str | None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a link (ELOOP), a file this user may not read
        why = f"it cannot be read ({exc.strerror})"
    else:
        try:  # (checked on what was opened: no other file put there meanwhile)
            why = _unsafe(os.fstat(fd))
            text = os.read(fd, 300).decode("ascii", "replace").strip() if why is None else ""
        finally:
            os.close(fd)
        if why is None and TOKEN_SHAPE.fullmatch(text):
            return text
        why = why or "it holds no token"
    log.warning("not keeping the dashboard's token in %s: %s; a new one is made", path, why)
    path.unlink(missing_ok=True)
    return None


def _unsafe(info: os.stat_result) -> str | None:
    """Why a token file must not be trusted (None: it may): another user could have put its
    token there, or may have read it."""
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})"
    if info.st_mode & 0o077:
        return f"its mode is {stat.S_IMODE(info.st_mode):04o}, not 0600: others may read it"
    return None


def write_token(home: Path, token: str) -> None:
    """GPUHERD_HOME/ui_token, mode 0600 from its creation on. One that cannot be written (a
    full disk: "internal error", a traceback) is refused in one line, and not left empty."""
    path = token_path(home)
    try:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(token + "\n")
        except OSError:
            path.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise _unwritten_token(path, exc) from None


def _unwritten_token(path: Path, exc: OSError) -> HerdError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(
            f"the disk holding {path.parent} is full: the dashboard's token cannot be written "
            f"to {path}: free some space on it, then try again"
        )
    return HerdError(
        f"cannot write the dashboard's token to {path} ({exc.strerror or exc}): make its "
        "folder writable, then try again"
    )


def fresh_token() -> str:
    return secrets.token_urlsafe(32)
