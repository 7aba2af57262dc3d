"""A daemon's socket path longer than a Unix socket's address holds (paths.socket_path).

A GPUHERD_SOCKET of 136 bytes made every command fail with Python's words, `AF_UNIX path too
long (writing the output)`, exit 1, naming neither the variable nor what to do (and `daemon
stop` said so too, where "no daemon" exits 0); one taken from a long home (a relative
GPUHERD_SOCKET) said `cannot start in HOME (AF_UNIX path too long): check it`. It is now
refused before anything is tried, in one line that names it, its length and the limit.
"""

from __future__ import annotations

import os
from pathlib import Path

import click  # (imported by paths.socket_path on this error's path alone)

from gpuherd.errors import HerdError
from gpuherd.paths import SOCKET_PATH_MOST


class SocketPathTooLong(HerdError, click.ClickException):
    """A HerdError to the Python API (`gpuherd.connect()` raises it) and the daemon; to the
    CLI a ClickException of a usage error's exit status, 2, said as one line without a
    `--help` hint, as a bad GPUHERD_FAKE_GPUS is (cli/options.py): the environment is wrong,
    no option given, and nothing was tried (the CLI's HerdErrors exit 1: a refusal)."""

    exit_code = 2


def too_long(path: Path, given: str | None) -> SocketPathTooLong:
    """The refusal of a socket `path` longer than SOCKET_PATH_MOST: `given` is GPUHERD_SOCKET's
    value (None: the path is gpuherd's own choice, which only a long TMPDIR makes too long)."""
    size = len(os.fsencode(path))
    over = f"{size} bytes, over the {SOCKET_PATH_MOST} a Unix socket path may hold"
    if given is None:
        return SocketPathTooLong(
            f"the daemon's socket {path} would be {over}: set GPUHERD_SOCKET to a shorter "
            "path in a folder of yours, or TMPDIR to a shorter folder"
        )
    taken = "" if os.path.isabs(given) else f", taken from the home as {path},"
    return SocketPathTooLong(
        f"GPUHERD_SOCKET {given}{taken} is {over}: point it at a shorter path in a folder "
        "of yours, or unset it"
    )
