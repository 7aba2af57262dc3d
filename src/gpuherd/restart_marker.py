"""A note in the home that a `daemon restart` is under way, from before its stop to the next
daemon's start: between the two no daemon runs, and another restart that came then said `no
daemon was running for ...: starting one`, though one had run an instant before and the
first restart was starting the next. It now joins that restart, as it joins one it finds
stopping (cli/daemon_restart.py). A note per restart (`restarting.<pid>`): two at once each
keep and remove their own."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from gpuherd.core.text import ascii_digits

PREFIX = "restarting."

FRESH_FOR = 60.0
"""Seconds a note is believed: a restart stops its daemon and starts the next well within
(STOPPED_WITHIN and the start's wait); an older one's pid may be another process's since."""


@contextlib.contextmanager
def restart_under_way(home: Path) -> Iterator[None]:
    """Keep the note while the block (the restart's stop and start) runs."""
    note = home / f"{PREFIX}{os.getpid()}"
    try:
        note.touch()
    except OSError:  # (a home we cannot write: no daemon would start there either)
        yield
        return
    try:
        yield
    finally:
        note.unlink(missing_ok=True)


def other_restart(home: Path) -> int | None:
    """The pid of another call restarting the home's daemon now, if any."""
    try:
        notes = list(home.glob(f"{PREFIX}*"))
    except OSError:
        return None
    for note in notes:
        pid = note.name.removeprefix(PREFIX)
        if not ascii_digits(pid) or int(pid) == os.getpid():
            continue
        try:
            fresh = time.time() - note.stat().st_mtime < FRESH_FOR
            os.kill(int(pid), 0)
        except (OSError, ValueError):  # gone: a restart killed before it removed its note
            continue
        if fresh:
            return int(pid)
    return None
