"""Noticing that whoever read a follow's output went away while it had nothing to write
(`gpuherd log -f 7 | grep -m1 ready`, `gpuherd daemon log -f | grep -m1 serving`).

A follow writes only when text comes, and only a write told it that its reader had gone
(EPIPE): a quiet job, or a quiet daemon, held the whole pipeline for hours. As GNU `tail -f`
does (coreutils 8.28+), stdout is polled while the follow waits: a pipe or a socket whose last
reader closed it reports POLLERR (POLLHUP). Once so, the follow raises BrokenPipeError, which
ends the command as a failed write to a closed pipe does (cli/main.py: a quiet exit 0).
"""

from __future__ import annotations

import os
import queue
import select
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO, TypeVar

LOOK_EVERY = 0.25
"""Seconds between looks at stdout while a follow waits for text: how long a pipeline whose
reader went away still waits for this end."""

Item = TypeVar("Item")


def watched_fd(stream: TextIO | None = None) -> int | None:
    """The descriptor of `stream` (stdout) if it is a pipe or a socket, the only places whose
    reader can go away (a terminal hung up sends SIGHUP; a file has none); else None."""
    try:
        fd = (stream or sys.stdout).fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):  # (no descriptor: a test's captured stdout)
        return None
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


def reader_left(fd: int | None, seconds: float = 0.0) -> bool:
    """Whether the reader of `fd` (watched_fd's) has gone, waiting up to `seconds` for it to
    go: a sleep of that long otherwise, cut short as it goes."""
    if fd is None:
        time.sleep(seconds)
        return False
    closed = select.poll()
    closed.register(fd, 0)  # (no event asked: POLLERR and POLLHUP are reported all the same)
    gone = select.POLLERR | select.POLLHUP
    return any(events & gone for _, events in closed.poll(seconds * 1000))


def pause(seconds: float, stream: TextIO | None = None) -> None:
    """Sleep `seconds` between two looks at a followed file, raising BrokenPipeError as soon
    as the reader of `stream` (stdout) goes away."""
    if reader_left(watched_fd(stream), seconds):
        raise_reader_left()


def raise_reader_left() -> None:
    raise BrokenPipeError(32, "the reader of the output went away")


class _Stopped(Exception):
    """Raised in the producing thread by `emit` once nothing takes its items any more."""


class _Ended:
    """The producer's end, passed to the consuming thread: its error, if it raised one."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


def produced_aside(
    produce: Callable[[Callable[[Item], None]], None], stream: TextIO | None = None
) -> Iterator[Item]:
    """What `produce` passes to the `emit` it is given, in order, produced in a thread of its
    own, so that stdout (`stream`) is looked at while it produces nothing: BrokenPipeError as
    soon as its reader goes away. (A follow reads the daemon's stream, which blocks until the
    next text or keep-alive; a callback, not an iterator, so that a note the producer makes
    while it waits, `the daemon went away`, keeps its place among the text.) What `produce`
    raises is raised here; once this iterator is let go, its next `emit` ends `produce`."""
    items: queue.Queue[Item | _Ended] = queue.Queue(maxsize=16)  # (a slow reader slows it)
    stopped = threading.Event()

    def emit(item: Item) -> None:
        if not _handed(items, item, stopped):
            raise _Stopped

    def run() -> None:
        try:
            produce(emit)
        except _Stopped:
            return
        except BaseException as exc:  # raised where the items are taken (Ctrl-C is not here)
            _handed(items, _Ended(exc), stopped)
        else:
            _handed(items, _Ended(None), stopped)

    fd = watched_fd(stream)
    threading.Thread(target=run, name="gpuherd-follow", daemon=True).start()
    try:
        while True:
            try:
                item = items.get(timeout=None if fd is None else LOOK_EVERY)
            except queue.Empty:
                if reader_left(fd):
                    raise_reader_left()
                continue
            if not isinstance(item, _Ended):
                yield item
            elif item.error is not None:
                raise item.error
            else:
                return
    finally:
        stopped.set()


def _handed(
    items: queue.Queue[Item | _Ended], item: Item | _Ended, stopped: threading.Event
) -> bool:
    """Whether `item` was put in `items`, waiting for room until `stopped` (False then)."""
    while not stopped.is_set():
        try:
            items.put(item, timeout=LOOK_EVERY)
            return True
        except queue.Full:
            continue
    return False
