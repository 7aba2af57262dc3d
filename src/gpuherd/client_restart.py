"""A client that finds no daemon while a `gpuherd daemon restart` is under way waits for the
next one (a part of client.py, which has no room for it).

Between the old daemon letting go of the home and the new one listening (a second or more),
every command and Python call failed at once: "no gpuherd daemon is running ...: start it
again with `gpuherd daemon start`", and that start then said "a daemon is already running".
A script that submits in a loop, or a `gpuherd wait` begun in that moment, died while
someone else restarted the daemon. A restart leaves a note in the home while it runs
(restart_marker.py): a client that finds no daemon and such a note, its restart alive, waits
for the new daemon to answer, then carries on. Only a connection that could not be made at
all is waited for: nothing was sent, so nothing is sent twice (a request the old daemon may
have received is said as before: client_wait.lost). A note whose restart died is ignored.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gpuherd.errors import NotRunning
from gpuherd.restart_marker import PREFIX, other_restart
from gpuherd.typed_name import as_typed, prefixed

RESTART_WITHIN = 35.0
"""Seconds a client waits for the daemon a restart starts: the restart's own wait for its
start (daemon_cmds.START_TIMEOUT, 30 s), and a little for its stop's end before that. The wait
ends sooner as soon as the restart does (its note is gone), or dies."""
SAY_AFTER = 1.0
"""Seconds of waiting after which the wait is said (once a process): a restart's gap is
usually shorter, and a command that takes a second more needs no word."""
LOOK_EVERY = 0.1
"""Seconds between tries of the socket while a restart is under way."""

_said = False


def after_restart(
    home: Path,
    reach: Callable[[], socket.socket],
    none: type[NotRunning],
    waits: bool,
) -> socket.socket:
    """A socket to the daemon that a restart under way starts (`reach` tries it: it raises
    FileNotFoundError or ConnectionRefusedError while none listens), or `none` (NotRunning,
    or StoppedMeanwhile) with the line that says none runs, when no restart is under way, it
    ended or died without a daemon answering, or RESTART_WITHIN passed. `waits`: False for a
    client that waits for nothing (a start's polls of its own daemon). A restart does not
    wait for another: it joins it its own way (cli/daemon_restart.py)."""
    from gpuherd.start_hint import not_running  # (the error path alone reads the home)

    pid = other_restart(home) if waits and not _restarting_itself(home) else None
    if pid is None:
        raise none(not_running(home))
    began = time.monotonic()
    give_up = began + RESTART_WITHIN
    while pid is not None:
        try:
            return reach()
        except (FileNotFoundError, ConnectionRefusedError):
            pass
        now = time.monotonic()
        if now >= give_up:
            raise none(_not_back(home, pid))
        if now - began >= SAY_AFTER:
            _say_waiting(pid)
        time.sleep(LOOK_EVERY)
        pid = other_restart(home)
    try:  # (the restart ended as this looked: its daemon may have started just before)
        return reach()
    except (FileNotFoundError, ConnectionRefusedError):
        raise none(not_running(home)) from None


def _restarting_itself(home: Path) -> bool:
    """Whether this process is a restart of the home's daemon (it keeps its own note)."""
    return (home / f"{PREFIX}{os.getpid()}").exists()


def _say_waiting(pid: int) -> None:
    global _said
    if not _said:
        _said = True
        said = f"the daemon is restarting (`gpuherd daemon restart`, pid {pid})"
        wait = f"waiting up to {RESTART_WITHIN:g}s for the new one to answer"
        sys.stderr.write(prefixed(as_typed(said), wait) + "\n")


def _not_back(home: Path, pid: int) -> str:
    return as_typed(
        f"no gpuherd daemon answers for {home}: a `gpuherd daemon restart` (pid {pid}) is "
        f"starting the next one, which has not answered within {RESTART_WITHIN:g}s: "
        "`gpuherd daemon status` says once it is up"
    )
