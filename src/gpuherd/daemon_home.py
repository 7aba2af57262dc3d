"""What a starting daemon takes of its home: the lock (home_lock.py) and the home's id
(home_id.py), the home's privacy, the socket (kept while it runs) and the dashboard's TCP one
(where the last daemon listened, if asked), and the checks that the database matches the job
folders beside it (a part of daemon.py)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
from pathlib import Path

from gpuherd import home_lock, paths
from gpuherd.core.mounts import mount_of, network_kind
from gpuherd.core.units import plural
from gpuherd.errors import HerdError
from gpuherd.home_header import identity as folder_identity
from gpuherd.home_id import keep
from gpuherd.home_lock import AlreadyRunning as AlreadyRunning
from gpuherd.saved_settings import LISTEN, DamagedSetting, parse_listen
from gpuherd.socket_peer import another_users_socket, peer_uid
from gpuherd.store import Store
from gpuherd.store_schema import set_aside

log = logging.getLogger("gpuherd.daemon")


MOUNT_TABLE = "/proc/self/mountinfo"
NETWORK_HOME_VARIABLE = "GPUHERD_ALLOW_NETWORK_HOME"
"""Set to 1 to run a daemon whose home is on a network file system anyway."""


def acquire_lock(home: Path) -> home_lock.HomeLock:
    """The home's lock (home_lock.acquire_lock), then its id kept in it (home_id.keep): under
    the lock, so that two starts never give one home two ids, and before its socket's path
    (paths.socket_dir) and its jobs' attempt keys (Layout.for_home) are made of it."""
    lock = home_lock.acquire_lock(home)
    try:
        keep(home)
    except BaseException:
        lock.close()
        raise
    return lock


def refuse_a_network_home(home: Path) -> None:
    """A home on NFS (or another network file system) is refused before it is touched: SQLite
    sets up its write-ahead log there without a word, and the queue is damaged later (two
    machines sharing the home, locks the server drops). NETWORK_HOME_VARIABLE=1 runs there
    anyway, said in the log."""
    # The path first, the table after: looking the home up mounts an automounted one (autofs,
    # as lab servers mount /home over NFS), which the table read before would not show yet.
    path = os.path.realpath(_nearest_existing(home))
    try:
        with open(MOUNT_TABLE, encoding="utf-8", errors="surrogateescape") as f:
            table = f.read()
    except OSError:
        return  # no /proc (not Linux): nothing to tell by
    where = mount_of(table, path)
    if where is None or not network_kind(where[1]):
        return
    point, kind = where
    if os.environ.get(NETWORK_HOME_VARIABLE) == "1":
        log.warning(
            "%s is on a network file system (%s at %s): run there anyway", home, kind, point
        )
        return
    raise HerdError(
        f"{home} is on a network file system ({kind} at {point}), where the queue's database "
        "(SQLite with a write-ahead log) gets damaged: set GPUHERD_HOME to a folder on this "
        f"machine's own disk (`df -T` shows which are local), or {NETWORK_HOME_VARIABLE}=1 to "
        "run there anyway"
    )


def refuse_another_users_home(home: Path) -> None:
    """A home that is another user's folder is refused before it is touched: its owner can
    open it again whenever they like (a chmod that undoes make_home_private), read every job's
    logs, and replace what is in it (herd.db, task-params/): jobs of theirs, run as you. (A
    folder made in /tmp by someone else, under the name one then gives to GPUHERD_HOME.)"""
    try:
        owner = home.stat().st_uid
    except OSError:  # none yet: the daemon makes it, its own
        return
    if owner != os.getuid():
        raise HerdError(
            f"GPUHERD_HOME {home} belongs to another user (uid {owner}), who could read the "
            "jobs' logs in it and replace its queue with jobs of theirs, run as you: set "
            "GPUHERD_HOME to a folder of your own, or `chown` this one to you if it is yours"
        )
    refuse_planted_files(home)


OPEN_TO_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def refuse_planted_files(home: Path) -> None:
    """A home (or a folder in it) that others could write may hold what they put there
    before make_home_private closed it: a link as `daemon.lock` or `daemon.socket.tmp` (the
    daemon wrote over the file it names, one of yours), a `herd.db` of their jobs (run as
    you). Such a file of another user's is refused before anything is written; only the
    folders open to others are looked into (a private home's: none)."""
    for folder in _open_folders(home):
        try:
            entries = list(os.scandir(folder))
        except OSError:  # gone, or not to be listed: nothing of it is opened by name here
            continue
        for entry in entries:
            try:
                found = entry.stat(follow_symlinks=False)
            except OSError:  # gone since it was listed
                continue
            if found.st_uid != os.getuid():
                raise HerdError(
                    f"{entry.path} belongs to another user (uid {found.st_uid}), who could "
                    f"put it there while {folder} was open to others (mode "
                    f"{stat.S_IMODE(folder.stat().st_mode):04o}): a link to a file of yours "
                    "for the daemon to write over, or a queue of jobs to run as you; remove "
                    "it (or `chown` it to you if it is yours), then start the daemon again"
                )


def _open_folders(home: Path) -> list[Path]:
    """The home and the folders directly in it that group or others may write."""
    try:
        found = [home] if home.lstat().st_mode & OPEN_TO_OTHERS else []
        inside = [Path(entry.path) for entry in os.scandir(home)]
    except OSError:  # none yet (the daemon makes it), or not a folder: said elsewhere
        return []
    for path in inside:
        try:
            mode = path.lstat().st_mode
        except OSError:  # gone since it was listed
            continue
        if stat.S_ISDIR(mode) and mode & OPEN_TO_OTHERS:
            found.append(path)
    return found


def _nearest_existing(path: Path) -> Path:
    """`path`, or the nearest folder above it that exists (a home not made yet)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def make_home_private(home: Path) -> None:
    """The home 0700: herd.db, job.json and the logs hold the jobs' environments (API keys).
    A new home (no herd.db yet: `daemon start` made it, with the umask's mode, for daemon.log)
    is closed in silence, an older gpuherd's with a line in the log. Only the home: the umask
    the jobs inherit (their own output files) stays the user's."""
    mode = stat.S_IMODE(home.stat().st_mode)
    if not mode & 0o077:
        return
    try:
        os.chmod(home, mode & 0o700)
    except OSError as exc:  # a file system that takes no chmod: serve anyway (herd.db is 0600)
        log.warning("cannot make %s private (%s): `chmod 700` it", home, exc.strerror)
        return
    if paths.database(home).exists():
        log.warning(
            "%s was open to other users (mode %04o): made it 0700, as it holds the jobs' "
            "environments (API keys) and logs",
            home,
            mode,
        )


def bind_socket(path: Path, own_folder: bool) -> socket.socket:
    """A listening Unix socket, 0600 inside a 0700 folder: the file mode is the access control.
    A folder that is not gpuherd's own (GPUHERD_SOCKET=/tmp/herd.sock) keeps its mode: made
    0700, /tmp would be closed to everyone else. The socket's 0600 and the peer check
    (api/peercred.py) still keep other users out."""
    try:
        if own_folder or not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(path.parent, 0o700)
        elif not path.parent.is_dir():  # (GPUHERD_SOCKET's folder, a file)
            raise NotADirectoryError
    except (FileExistsError, NotADirectoryError):  # said `[Errno 17] File exists: '…/run'`
        raise HerdError(paths.socket_folder_blocked(path)) from None
    if (owner := _answers(path)) is not None and owner != os.getuid():
        raise HerdError(another_users_socket(path, owner))
    if owner is not None:  # our lock is this home's: a daemon of another home took the path
        raise HerdError(
            f"another daemon listens on {path} (a GPUHERD_SOCKET shared by two homes?): "
            "give each home its own socket, or unset GPUHERD_SOCKET"
        )
    with contextlib.suppress(FileNotFoundError):
        found = path.lstat().st_mode
        if not stat.S_ISSOCK(found):  # never removed: it is someone's (notes, a folder of files)
            what = "a folder" if stat.S_ISDIR(found) else "a file that is no socket"
            raise HerdError(
                f"{what} stands where the daemon's socket goes, {path}: move it away, then "
                "`gpuherd daemon start` again"
            )
        path.unlink()  # a stale socket of a dead daemon (we hold the lock)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


LAST_LISTEN = LISTEN
"""The setting that keeps where the last daemon listened on TCP ("": it did not)."""
_NOT_LISTENING = "`gpuherd daemon start` starts one that does not listen"
_ELSEWHERE = "`gpuherd daemon start --listen HOST:PORT` one that listens there"


def bind_tcp(
    store: Store, listen: str | None, as_before: bool
) -> tuple[socket.socket | None, str | None]:
    """The dashboard's TCP socket bound at `listen` (`as_before`, without it: where the last
    daemon listened, for `daemon restart` when none runs), and the address it is bound at
    (port 0 asked: the port given), what a next start listens at; or no socket."""
    from gpuherd.api import listener as tcp  # (deferred: the web framework; serve has it)
    from gpuherd.listen_address import format_address, parse_address

    def bound(address: str | None) -> tuple[socket.socket | None, str | None]:
        if not address:
            return None, address
        sock = tcp.bind(address)
        return sock, format_address(parse_address(address)[0], int(sock.getsockname()[1]))

    if listen is not None or not as_before:
        try:
            return bound(listen)
        except tcp.PortTaken as exc:  # (by what, the user knows better than we do)
            raise HerdError(
                f"{exc}: free that port, or start the daemon with another --listen address "
                "(port 0 takes a free one: --listen 127.0.0.1:0)"
            ) from None
    # Either start saves its own address over the row (none: "", which a restart leaves).
    try:
        last = parse_listen(store.get_setting(LAST_LISTEN))
    except DamagedSetting as exc:  # (it was told to "free that port", which nothing held)
        raise HerdError(f"{exc}: {_NOT_LISTENING}, or {_ELSEWHERE}") from None
    try:
        return bound(last)
    except tcp.NotHere as exc:  # (one of this machine's once: its network changed since?)
        raise HerdError(
            f"{exc.said} (where the last daemon listened; no address of this machine now):"
            f" start one with gpuherd daemon start {exc.choices}"
        ) from None
    except tcp.PortTaken as exc:
        raise HerdError(
            f"{exc} (where the last daemon listened): free that port, or {_NOT_LISTENING} "
            "(`gpuherd ui` then listens on a free port)"
        ) from None
    except HerdError as exc:  # (a host no longer known, a port below 1024: nothing to free)
        raise HerdError(
            f"{exc} (where the last daemon listened): {_NOT_LISTENING}, or {_ELSEWHERE}"
        ) from None


def note_socket(home: Path, path: Path) -> None:
    """Note the socket (and whose it is) in the home, for clients whose XDG_RUNTIME_DIR is not
    the daemon's. The home is noted too, by its path and its folder (DEV:INO): a copy of the
    home (`cp -a`) holds this note, and its clients must not take this daemon, and this queue,
    for theirs; the home moved (`mv`) is still its folder (socket_found.noted_socket)."""
    note, draft = paths.socket_note(home), home / "daemon.socket.tmp"
    draft.write_text(f"{path}\n{home}\n{folder_identity(home) or ''}\n")
    try:
        draft.replace(note)  # whole or not at all: clients read it without a lock
    except OSError:  # (a folder as daemon.socket): the start fails, leaving no draft behind
        draft.unlink(missing_ok=True)
        raise


class SocketKeeper:
    """Makes the daemon's socket again where it vanished from; where that cannot be made
    (the runtime folder is gone until the user logs in again), in the home, noted there."""

    def __init__(self, home: Path, path: Path, own_folder: bool) -> None:
        self.home = home
        self.path = path
        self._own_folder = own_folder
        self._bound = {path: _identity(path)}
        self._failed = False

    def lost(self) -> bool:
        """Whether the socket file now served is gone (or another file took its path)."""
        return _identity(self.path) != self._bound[self.path]

    def rebind(self) -> socket.socket | None:
        """A new listening socket, at the first place that takes one (noted in the home);
        None if none did (tried again at the next look)."""
        tried = []
        for path, own in ((self.path, self._own_folder), (self.home / "run" / "herd.sock", True)):
            try:
                sock = bind_socket(path, own_folder=own)
            except (OSError, HerdError) as exc:
                tried.append(f"{path}: {getattr(exc, 'strerror', None) or exc}")
                continue
            self._bound[path] = _identity(path)
            log.warning("the socket %s was removed: listening on %s again", self.path, path)
            try:
                note_socket(self.home, path)
            except OSError as exc:  # clients that compute this path still find it
                log.warning("cannot note the socket in %s: %s", self.home, exc)
            self.path, self._failed = path, False
            return sock
        if not self._failed:  # once, not at every look
            log.warning("the socket was removed and cannot be made again (%s)", "; ".join(tried))
        self._failed = True
        return None

    def remove(self) -> None:
        """Remove the socket files this daemon made that are still its own, and a long
        home's folder under /tmp that held one (paths.remove_long_home_socket_dir)."""
        for path, identity in self._bound.items():
            if identity is not None and _identity(path) == identity:
                path.unlink(missing_ok=True)
            paths.remove_long_home_socket_dir(self.home, path)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.lstat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISSOCK(found.st_mode) else None


def _answers(path: Path) -> int | None:
    """The uid of what listens on the Unix socket at `path` (None: nothing listens)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
        return peer_uid(probe)
    except OSError:  # none there, refused (stale), not a socket
        return None
    finally:
        probe.close()


def _job_folders(home: Path) -> list[int]:
    """The numbers of the job folders in the home (none: no jobs folder yet)."""
    try:
        return [int(name) for name in os.listdir(home / "jobs") if name.isdecimal()]
    except OSError:
        return []


def refuse_an_emptied_database(home: Path) -> None:
    """An empty herd.db beside job folders is a queue lost (emptied by a full disk, a `>`
    that missed its file): opened, it would become an empty queue in silence, and the file
    that a backup could replace would be written over. A new home's is simply new."""
    database = paths.database(home)
    try:
        empty = database.stat().st_size == 0
    except OSError:
        return  # none yet (a new home); one that cannot be read: the store says why
    folders = _job_folders(home) if empty else []
    if folders:
        raise HerdError(
            f"{database} is empty but {home / 'jobs'} holds the folders of "
            f"{plural(len(folders), 'job')}: {set_aside(database)}"
        )


def number_after_job_folders(store: Store, home: Path) -> None:
    """A new job never takes the folder of one the database forgot (herd.db deleted, emptied
    or restored from a backup): it would overwrite that job's logs and job.json."""
    last = max(_job_folders(home), default=0)
    if store.number_jobs_after(last):
        log.warning(
            "the database knew no job numbered %d, whose folder is in %s: new jobs are "
            "numbered after it",
            last,
            home / "jobs",
        )
