"""Where a GPUHERD_HOME keeps its database, logs, lock and socket."""

from __future__ import annotations

import os
from pathlib import Path

_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes on Linux; keep a margin
SOCKET_PATH_MOST = 107
"""The bytes a Unix socket's path may have on Linux: sun_path's 108, less the NUL ending it."""


def home_dir(home: str | Path | None = None) -> Path:
    """The daemon's home: `home` (from this process's folder), else GPUHERD_HOME, else the
    XDG data folder's. A relative GPUHERD_HOME is taken from the folder this process was in
    when it was first read, and set so, absolute, for the rest of the process: read again
    after an os.chdir (a script's, a notebook's), it named another home, whose new daemon
    the next connect() (each task's submit) started, with none of the first one's jobs."""
    if home is not None:
        return Path(home).expanduser().absolute()
    if given := os.environ.get("GPUHERD_HOME"):
        found = Path(given).expanduser().absolute()
        if not os.path.isabs(given):  # (`~/h` too: absolute, and read alike from anywhere)
            os.environ["GPUHERD_HOME"] = str(found)
        return found
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "gpuherd"


def submitter_env() -> dict[str, str]:
    """The environment a submitted job gets: the submitter's, with GPUHERD_HOME absolute. A
    relative one was read from the job's own folder (`--cwd`, a `cd`), where it named no
    home: `gpuherd` in the job did not reach the daemon that ran it."""
    env = dict(os.environ)
    if env.get("GPUHERD_HOME"):
        env["GPUHERD_HOME"] = str(Path(env["GPUHERD_HOME"]).expanduser().absolute())
    return env


def database(home: Path) -> Path:
    return home / "herd.db"


def daemon_log(home: Path) -> Path:
    return home / "daemon.log"


def task_params(home: Path) -> Path:
    """Where a Python task's large parameters wait for its first run (tasks.py, worker.py)."""
    return home / "task-params"


def write_task_file(path: Path, data: bytes) -> None:
    """Write `data` as `path` under task_params(), readable by this user alone, whole or not
    at all (a new name, then renamed): a task's parameters or pickled function, which a job
    reads. OSError for the caller to word."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{id(data):x}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    tmp.replace(path)


def lock_file(home: Path) -> Path:
    return home / "daemon.lock"


HOOK_LOG = "hooks.log"
"""The on-end hooks' output, in the home (hooks.py; `daemon log --hooks`)."""
HOME_ID_FILE = "home_id"
"""The home's id, kept in it (home_id.py): what its jobs' attempt keys and socket folder carry."""
TOKEN_FILE = "ui_token"
"""The dashboard's token, in the home (mode 0600): written when the daemon first listens on
TCP, kept across restarts, replaced by `ui --new-token` (api/listener.py)."""


def daemon_files(home: Path) -> tuple[Path, ...]:
    """The files the daemon keeps in its home beside herd.db: its lock (with its pid), log,
    socket note, the home's id, the dashboard's token and the hooks' log (and the one before).
    No other command writes over them (`daemon backup`: a copy put in daemon.lock's place lost
    the pid a stuck daemon is named by)."""
    hooks = home / HOOK_LOG
    return (
        lock_file(home),
        daemon_log(home),
        socket_note(home),
        home / HOME_ID_FILE,
        home / TOKEN_FILE,
        hooks,
        hooks.with_name(f"{HOOK_LOG}.1"),
    )


def socket_dir(home: Path) -> Path:
    """A 0700 folder for the socket, without GPUHERD_SOCKET: under XDG_RUNTIME_DIR when set,
    else in the home.

    One folder per home (named by its id, home_id.py: kept in the home, so the clients of a
    home moved while its daemon runs still find it), so several homes never share a socket; a
    home whose path is too long for a Unix socket gets a folder under /tmp
    (long_home_socket_dir), which its daemon removes as it stops.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "gpuherd" / _home_id(home) if runtime else home / "run"
    if len(str(folder / "herd.sock")) > _SOCKET_PATH_MAX:
        folder = long_home_socket_dir(home)
    return folder


def long_home_socket_dir(home: Path) -> Path:
    """The socket's folder of a home whose path is too long for a Unix socket:
    /tmp/gpuherd-UID/ID, a folder for each home (by its id) in one for each user."""
    import tempfile  # rarely needed; costs the CLI a few ms at start-up

    return Path(tempfile.gettempdir()) / f"gpuherd-{os.getuid()}" / _home_id(home)


def remove_long_home_socket_dir(home: Path, socket: Path) -> None:
    """Remove the /tmp/gpuherd-UID/HASH folder of `home`'s daemon as it stops, once its
    socket is gone from it: they were never removed, and piled up (28 on one machine). Only
    when `socket` is in it (a daemon of this home made it), and only if empty (a folder
    holding anything else is not the daemon's to remove). gpuherd-UID is kept: the other
    homes' daemons make their folders in it, and one removed under a daemon that starts
    would fail its start."""
    folder = socket.parent
    if os.environ.get("GPUHERD_SOCKET") or folder != long_home_socket_dir(home):
        return
    try:
        folder.rmdir()
    except OSError:  # not empty, or gone already: left as it is
        pass


def _home_id(home: Path) -> str:
    from gpuherd.home_id import home_id  # (deferred: home/run needs no id)

    return home_id(home)


def socket_note(home: Path) -> Path:
    """Where the running daemon notes its socket: a client whose XDG_RUNTIME_DIR is not the
    daemon's (an ssh session, cron, tmux) computes another path, and finds it here."""
    return home / "daemon.socket"


def socket_path(home: Path) -> Path:
    """GPUHERD_SOCKET (a relative one from the home, where the daemon, in it, binds it: the
    client took it from its own folder, and found the daemon only by its note), else
    socket_dir's herd.sock. SocketPathTooLong for one no Unix socket can have: every command
    said `AF_UNIX path too long (writing the output)`."""
    given = os.environ.get("GPUHERD_SOCKET") or None
    path = home / given if given else socket_dir(home) / "herd.sock"
    if len(os.fsencode(path)) > SOCKET_PATH_MOST:
        from gpuherd.socket_length import too_long  # (deferred: it loads click)

        raise too_long(path, given)
    return path


def make_home(home: Path) -> None:
    """Create the home's folder (and those above it), or a HerdError saying why it cannot be:
    `daemon start` and `gpuherd.connect()` alike (connect raised Python's bare FileExistsError
    for a home that is a file)."""
    from gpuherd.errors import HerdError

    try:
        home.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise HerdError(not_a_folder(home)) from None
    except OSError as exc:
        raise HerdError(
            f"cannot create the daemon's home {home}: {exc.strerror or exc}; "
            "point GPUHERD_HOME at a folder you can write"
        ) from None


FILE_IN_THE_WAY = "a file stands where a folder should be on its path"
"""Said where a file is in place of a folder a path goes through: a bare `File exists` or
`Not a directory` said nothing of it (home, socket, backup, --output, daemon.log)."""


def not_a_folder(home: Path, socket: Path | None = None) -> str:
    """What to say when a file stands where the home (or a folder on the way to the daemon's
    `socket`) should be."""
    for place in (home, *home.parents):
        if place.exists():
            if place.is_dir():
                break
            where = "" if place == home else f": {place}"
            return f"GPUHERD_HOME {home}{where} is a file, not a folder: point it at a folder"
    if socket is None:  # (the home's own folders: a file made there since it failed)
        return f"{home}: {FILE_IN_THE_WAY}"
    return socket_folder_blocked(socket)


def socket_folder_blocked(socket: Path) -> str:
    """What to say when a file stands where a folder on the way to the daemon's socket should
    be (`GPUHERD_HOME/run`, `$XDG_RUNTIME_DIR/gpuherd`): a bare `[Errno 17] File exists` was
    all `daemon start` said."""
    place = next((p for p in reversed(socket.parents) if p.exists() and not p.is_dir()), None)
    if place is None:  # (gone since it failed)
        return f"{socket}: {FILE_IN_THE_WAY}"
    if os.environ.get("GPUHERD_SOCKET"):
        other = "GPUHERD_SOCKET to a path in a folder of yours"
    else:
        other = "XDG_RUNTIME_DIR to a folder of yours"
    return (
        f"{place} is a file, not a folder, and the daemon's socket {socket} goes under it: "
        f"move the file aside, or set {other}"
    )


def current_folder(option: str = "--cwd DIR") -> str:
    """This process's working folder; a HerdError if it was removed since (a shell still in
    a deleted temporary folder): os.getcwd()'s bare FileNotFoundError reached the user as
    "No such file or directory (writing the output)". `option` gives another folder."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        from gpuherd.errors import HerdError  # (deferred: only on this error's path)

        raise HerdError(folder_gone(option)) from None


def folder_gone(option: str | None = None) -> str | None:
    """The line for a working folder that no longer exists (with `option` to give another
    folder in its place, if the command has one); None while it exists."""
    try:
        os.getcwd()
    except FileNotFoundError:
        other = f", or give {option}" if option else ""
        return (
            f"the current folder no longer exists (it was removed): cd to an existing folder{other}"
        )
    return None
