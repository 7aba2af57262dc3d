"""A copy of the queue (herd.db) in one consistent state, for `gpuherd daemon backup`.

Taken with SQLite's online backup from a read-only connection: one read transaction copies
every page as of one commit, herd.db-wal's included, while the daemon goes on committing
(WAL: a reader blocks no writer). No daemon need run, and one that does is not asked: the
backup is the file's, read beside it. The copy is written whole to a private (0600: it holds
every job's command and environment) file beside FILE, checked, and only then put in FILE's
place: a backup that fails (a full disk, a damaged herd.db) never leaves half a file there,
nor takes the place of the last good one. Without --force it is put there by a link, which
never replaces a file: one made there meanwhile stays, and the backup is refused as if it
had been there first.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import tempfile
from pathlib import Path
from urllib.parse import quote

from gpuherd import paths
from gpuherd.core.text import shell_word
from gpuherd.core.units import plural
from gpuherd.errors import HerdError
from gpuherd.store_schema import DATABASE_FILES


def back_up(home: Path, target: Path, replace: bool, folder: bool = False) -> str:
    """Copy the home's herd.db to `target` (replacing a file there only if `replace`); what
    was done, in one line. Every refusal is a HerdError saying what to do. `folder`: FILE was
    given with a trailing slash, a folder meant (`daemon backup ~/backups/`)."""
    database = paths.database(home)
    if folder and not target.is_dir():
        # A path loses its trailing slash: the copy was written as a file of the folder's
        # name (`<home>/jobs`, in a home without one yet, where the jobs' folders go).
        raise HerdError(f"no folder {target}/: {_a_file_in(target, home)}")
    _check(home, database, target, replace)
    try:
        handle, part = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".part", dir=target.parent
        )
    except OSError as exc:
        raise HerdError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(handle)
    try:
        jobs = _copy(database, Path(part))
        _put_in_place(Path(part), target, replace)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise
    _sync_folder(target.parent)
    return f"backed up the queue ({plural(jobs, 'job')}) to {target}"


def _check(home: Path, database: Path, target: Path, replace: bool) -> None:
    if not database.is_file():
        raise HerdError(
            f"no queue to back up: {home} holds no herd.db (no daemon has run there); set "
            "GPUHERD_HOME to the home to back up"
        )
    if target.is_dir():
        raise HerdError(f"{target} is a folder: {_a_file_in(target, home)}")
    if not target.parent.is_dir():
        folder = target.parent
        if folder.exists() or any(p.exists() and not p.is_dir() for p in folder.parents):
            raise HerdError(f"{target}: {paths.FILE_IN_THE_WAY}")
        quoted = shell_word(str(folder))
        raise HerdError(f"the folder {folder} does not exist: create it (mkdir -p {quoted}) first")
    if target.resolve() in {Path(f"{database}{part}").resolve() for part in DATABASE_FILES}:
        raise HerdError(f"{target} is the queue's own database: name another file")
    if target.resolve() in {own.resolve() for own in paths.daemon_files(home)}:
        raise HerdError(f"{target} is one of the daemon's own files in {home}: name another file")
    kind = _not_a_file(target)
    if kind:  # a rename would put a regular file in its place: /dev/null, as root, for all
        raise HerdError(
            f"{target} is {kind}, not a file: the copy is written as a file of its own; name "
            "one, such as herd-backup.db"
        )
    if target.exists() and not replace:
        raise _exists(target)


def _a_file_in(folder: Path, home: Path) -> str:
    """What to name for a backup named by its folder: not a file in the home (`daemon backup
    ~/.local/share/gpuherd/jobs/` was told to write jobs/herd.db, beside the jobs' folders),
    which goes with the home the backup is kept against (a disk lost, an `rm -r`)."""
    if not _within(folder, home):
        made = "" if folder.is_dir() else f" (`mkdir -p {shell_word(str(folder))}` first)"
        return f"name the file to write, such as {folder / 'herd.db'}{made}"
    outside = Path.home() / "herd-backup.db"
    if _within(outside.parent, home):
        outside = home.parent / "herd-backup.db"
    return (
        f"name the file to write, outside the home {home} (a backup there goes with it), "
        f"such as {outside}"
    )


def _within(path: Path, home: Path) -> bool:
    return path.resolve().is_relative_to(home.resolve())


NOT_FILES = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
}


def _not_a_file(target: Path) -> str:
    """What `target` is when it is there and no regular file (a link: what it leads to)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return ""
    return NOT_FILES.get(stat.S_IFMT(mode), "")


def _exists(target: Path) -> HerdError:
    return HerdError(
        f"{target} exists: name another file, or give --force to replace it (the copy is "
        "written whole before it takes the file's place)"
    )


NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP}
"""What link() fails with on a file system that makes no hard links (vfat, some network ones)."""


def _put_in_place(part: Path, target: Path, replace: bool) -> None:
    """The checked copy becomes `target`. Without `replace`, by a link, which fails if a file
    is there: one made since _check looked (another backup to the same name, say) was
    replaced without a word by a rename, which replaces whatever it finds."""
    if replace:
        os.replace(part, target)
        return
    try:
        os.link(part, target)
    except FileExistsError:
        raise _exists(target) from None
    except OSError as exc:
        if exc.errno not in NO_HARD_LINKS:
            raise
        if os.path.lexists(target):  # looked at again: the narrowest window such a disk allows
            raise _exists(target) from None
        os.replace(part, target)
        return
    part.unlink()


def _copy(database: Path, part: Path) -> int:
    """Copy `database` into the empty file `part`, and check the copy: its number of jobs."""
    try:
        try:
            return _copy_read(database, part, "mode=ro")
        except sqlite3.OperationalError as exc:
            alone = _readable_only_as_immutable(database, exc)
            if alone is None:
                raise
            if not alone:
                raise _wal_unreadable(database) from None
        # A home on a disk gone read-only (the time to get its queue out): SQLite cannot
        # create the herd.db-shm a reader of a WAL database needs. With no herd.db-wal (a
        # daemon that stopped folded it in, and removed it), herd.db holds every commit.
        os.truncate(part, 0)
        return _copy_read(database, part, "mode=ro&immutable=1")
    except sqlite3.Error as exc:
        raise _failed(database, part, exc) from None


def _readable_only_as_immutable(database: Path, exc: sqlite3.OperationalError) -> bool | None:
    """None: `exc` is no failure to open a database in a folder that cannot be written.
    Else whether herd.db alone holds the queue (no herd.db-wal with commits in it)."""
    if getattr(exc, "sqlite_errorname", None) != "SQLITE_CANTOPEN":
        return None
    if os.access(database.parent, os.W_OK):
        return None
    wal = Path(f"{database}-wal")
    return not wal.exists() or wal.stat().st_size == 0


def _wal_unreadable(database: Path) -> HerdError:
    return HerdError(
        f"cannot read {database}: its folder cannot be written (a read-only disk?), and SQLite "
        f"reads the commits still in {database.name}-wal only with a {database.name}-shm it "
        "creates there: copy the herd.db* files to a folder you can write, and back up from "
        "there (GPUHERD_HOME=that folder); nothing written"
    )


def _copy_read(database: Path, part: Path, mode: str) -> int:
    """_copy, through a connection of `mode`; sqlite3.Error as SQLite raises it."""
    reading = sqlite3.connect(f"file:{quote(str(database))}?{mode}", uri=True)
    # (The copy closed first: which folds its own -wal into it, and removes it.)
    with (
        contextlib.closing(reading) as source,
        contextlib.closing(sqlite3.connect(part)) as copy,
    ):
        source.backup(copy)  # in one step (pages=-1): one read transaction, one state
        problem = copy.execute("PRAGMA integrity_check(1)").fetchone()[0]
        if problem != "ok":
            raise _damaged(database, problem)
        return int(copy.execute("SELECT count(*) FROM jobs").fetchone()[0])


def _damaged(database: Path, problem: object) -> HerdError:
    return HerdError(f"the database {database} is damaged ({problem}): nothing written")


def _failed(database: Path, part: Path, exc: sqlite3.Error) -> HerdError:
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return _damaged(database, exc)
    if "no such table" in str(exc):  # (an empty file too)
        return HerdError(f"{database} is not a gpuherd database: nothing written")
    return HerdError(f"cannot back up {database} to {part.parent} ({exc}): nothing written")


def _sync_folder(folder: Path) -> None:
    """Make the rename durable: a backup the next power cut takes back is none."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system that does not sync folders: the rename is what it is
    finally:
        os.close(fd)
