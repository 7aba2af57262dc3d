"""Ctrl-C during `daemon restart`: between its stop and its start it left no daemon at all,
and said only "interrupted". From the stop on, the first Ctrl-C is put off (said so) and the
restart carried through; a second one stops it, saying what it left and what to type."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import click

from gpuherd.daemon_presence import lock_holder
from gpuherd.typed_name import prefixed, typed_name

GOES_ON = (
    "the restart goes on, as one stopped here leaves no daemon running (Ctrl-C again to stop "
    "it all the same)"
)
"""The first Ctrl-C's line, after `gpuherd: interrupted: `."""


class SecondInterrupt(KeyboardInterrupt):
    """The second Ctrl-C. A subclass, as CPython marks a KeyboardInterrupt (exactly that
    class) unhandled when it leaves code run by eval() of a string, and then ends itself by
    SIGINT however the program ends: one that came during the import of psutil (whose
    namedtuples are made so) said what it left, then died by SIGINT, not exit 130."""


@contextmanager
def second_interrupt_stops(said: str) -> Iterator[None]:
    """Within: the first Ctrl-C (SIGINT) is said on stderr (`gpuherd: interrupted: SAID`:
    what goes on, and that a second Ctrl-C stops it), and the block goes on; a second one
    raises SecondInterrupt, a KeyboardInterrupt, for the caller to say what it left. Where
    SIGINT is ignored (a command a script started with `&`) or taken by another handler, and
    off the main thread (where no handler can be set), Ctrl-C is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    told = False

    def put_off(signum: int, frame: FrameType | None) -> None:
        nonlocal told
        if told:
            raise SecondInterrupt
        told = True
        click.echo(prefixed("interrupted", said), err=True)

    signal.signal(signal.SIGINT, put_off)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def interrupted(home: Path, pid: int, kill: bool) -> int:
    """Say what a restart stopped by a second Ctrl-C left (the daemon `pid` stopping, or
    stopped with none started, or a new one starting) and what to type; the exit status."""
    name, holder = typed_name(), lock_holder(home)
    start = f"`{name} daemon start`"
    jobs = "" if kill else " (running jobs go on: it re-attaches them)"
    if holder is None:
        said = f"the daemon stopped, and no new one was started: {start} starts one{jobs}"
    elif holder == pid:
        said = (
            f"no new daemon was started, and the daemon (pid {pid}) is stopping: once "
            f"`{name} daemon status` says none runs, {start} starts one{jobs}"
        )
    else:  # (spawned just before the Ctrl-C, or by another call)
        said = f"a new daemon (pid {holder}) is starting: `{name} daemon status` says once it is up"
    click.echo(prefixed("interrupted", said), err=True)
    return 130
