"""Where a client finds the daemon's socket when it is not where the client first looked
(client.Client._reach): read on that error path alone, standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd import paths
from gpuherd.home_header import identity


def socket_elsewhere(home: Path, tried: Path) -> Path | None:
    """The daemon's socket, if not at `tried`: at the path made again (a new home's id, kept
    by its first daemon after the client made the path: paths.socket_dir), else where the
    running daemon noted it in the home (noted_socket); None if neither is another socket."""
    again = paths.socket_path(home)
    if again != tried and again.is_socket():
        return again
    noted = noted_socket(home)
    return noted if noted is not None and noted != tried and noted.is_socket() else None


def noted_socket(home: Path) -> Path | None:
    """The socket the running daemon noted in the home (daemon_home.note_socket), for a client
    whose XDG_RUNTIME_DIR is not the daemon's, if the note is this home's own: a home copied
    with `cp -a` (to try something on a copy) holds its original's note, whose socket is the
    original's daemon, with its queue. Its own is known by its path, or by its folder (DEV:INO)
    where the path noted is gone: the home was moved (`mv`) since its daemon started, which
    runs on with it (a copy is another folder)."""
    try:
        noted, *rest = paths.socket_note(home).read_text().splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    # (an older daemon notes no home, nor its folder)
    if rest and not _same_folder(rest[0], home) and not _moved_here(rest[1:], home):
        return None
    return Path(noted.strip())


def _same_folder(noted: str, home: Path) -> bool:
    try:
        return os.path.samefile(noted, home)
    except OSError:  # the noted home is gone: renamed, or this is a copy of a deleted one
        return False


def _moved_here(folder: list[str], home: Path) -> bool:
    """Whether the folder the note names (DEV:INO, its third line) is `home`'s."""
    return bool(folder and folder[0]) and folder[0] == identity(home)
