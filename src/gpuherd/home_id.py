"""The home's id: the first part of every attempt key (Layout.attempt_key), which a restarted
daemon knows its jobs' processes by, and the name of its socket's folder under XDG_RUNTIME_DIR
(paths.socket_dir).

It was a digest of the home's path, made again at each use: a home moved (`mv`) while its
jobs ran got another id at its new path, so the next daemon took its own running jobs for
another home's, called them lost ("killed with SIGKILL"), and gave their GPUs to other jobs;
and with XDG_RUNTIME_DIR set, no command found the moved home's daemon. Now the id is made
once and kept in the home (ID_FILE), and goes with it. A home no daemon of this version has
started yet has none: its id is the digest of its path, as its running jobs carry it, and its
next daemon keeps that one.

A copy of the home (`cp -a`, rsync, its files restored from a backup) holds the same file.
Used beside its original, it must not share its id: its daemon would take the original's jobs
for its own (and stop them as leftovers), and under XDG_RUNTIME_DIR both daemons want one
socket. So the file notes the folder it was kept in (DEV:INO and path), and a daemon that
starts in another folder (`keep`) looks there: while the original is there with this id, this
home is its copy and gets an id of its own; where it is gone (moved to another disk, restored
in its place), this home is it, and keeps its id. Read by every client (paths.socket_dir):
standard library only, one small read.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from gpuherd.home_header import identity
from gpuherd.paths import HOME_ID_FILE as ID_FILE

log = logging.getLogger("gpuherd.daemon")

# ID_FILE holds the id, then the folder it was kept in: DEV:INO, and its path (percent-encoded).
_ID = re.compile(r"[0-9a-f]{12}")
_MOST = 4096  # the file holds three short lines; a longer one is not ours


def home_id(home: Path) -> str:
    """The id kept in `home`, else (none kept yet, or a file that is not ours) the digest of
    its path, what gpuherd took before it kept one."""
    kept = _read(home)
    return kept[0] if kept is not None else path_digest(home)


def path_digest(folder: Path) -> str:
    """The digest of a folder's path: a home's id before it keeps one, a `gpuherd run`'s."""
    import hashlib  # deferred: loading OpenSSL costs the CLI ~2 ms, and home/run needs no hash

    return hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:12]


def keep(home: Path) -> str:
    """Keep the home's id in it, as its daemon starts (under the home's lock): the one kept,
    or a new one for a copy used beside its original (see the module's docstring); for a home
    with none kept, the digest of its path, which its running jobs (a home of an older
    gpuherd) and its clients carry. Returns the id kept. (A new home made where another was,
    moved since with its jobs running, shares its id: docs/files.md says so.)"""
    kept, here = _read(home), identity(home)
    if kept is None:
        # The digest of its path, a new home's too: the one its clients took before this
        # start (a client made then, waiting for the socket, looks where that id puts it).
        made = path_digest(home)
        try:
            _write(home, made, here)
        except OSError as exc:  # (a full disk: kept at the next start that can write it)
            log.warning("cannot keep the home's id in %s: %s", home / ID_FILE, exc.strerror)
        return made
    made, folder, path = kept
    if folder is None or folder == here:  # its own folder
        if path != str(home):  # renamed: where a copy of it now would look for it
            log.info("%s was moved here from %s: its running jobs are its own", home, path)
            _write(home, made, here)
        return made
    if path and _holds(Path(path), made, folder):
        new = _new_id()
        log.warning(
            "%s is a copy of the home %s, which is still there: it gets an id of its own "
            "(%s), and leaves the jobs the original runs to its daemon",
            home,
            path,
            new,
        )
        _write(home, new, here)
        return new
    log.info("%s was moved here from %s: its running jobs are its own", home, path or "elsewhere")
    _write(home, made, here)
    return made


def _holds(original: Path, made: str, folder: str) -> bool:
    """Whether the folder at `original` is the home `folder` (DEV:INO) that kept `made`."""
    kept = _read(original)
    return kept is not None and kept[0] == made and identity(original) == folder


def _read(home: Path) -> tuple[str, str | None, str] | None:
    """(id, DEV:INO, path) kept in `home` (None, "": not noted); None for no id kept."""
    try:
        with open(os.path.join(home, ID_FILE), "rb") as kept:
            lines = kept.read(_MOST).decode("ascii").split("\n")
    except (OSError, ValueError):  # (ValueError: not ASCII, or a NUL in the home's path)
        return None
    if not _ID.fullmatch(lines[0]):
        return None
    folder = lines[1] if len(lines) > 1 and lines[1] else None
    path = os.fsdecode(_unquote(lines[2])) if len(lines) > 2 else ""
    return lines[0], folder, path


def _write(home: Path, made: str, folder: str | None) -> None:
    """Write the id whole or not at all (a new file, then renamed): clients read it unlocked."""
    from urllib.parse import quote  # (deferred: the daemon's alone)

    text = f"{made}\n{folder or ''}\n{quote(os.fsencode(home))}\n"
    draft = home / f"{ID_FILE}.{os.getpid()}.tmp"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
        draft.replace(home / ID_FILE)
    except BaseException:
        draft.unlink(missing_ok=True)
        raise


def _unquote(text: str) -> bytes:
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(text)


def _new_id() -> str:
    return os.urandom(6).hex()
