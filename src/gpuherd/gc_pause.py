"""Python's cycle collector held off while a big listing is built or decoded.

Building a listing of 100,000 jobs allocates some 600,000 containers (rows, jobs, views), which
all survive: each allocation burst starts a collection, and the full ones walk every object
of the process. In the daemon, 3 full collections took 1.1 s of a 2.5 s `ls --json` of
100,000 queued jobs; in the client, decoding its answer took 0.7 s instead of 0.5. None of
those objects is part of a cycle, so a collection meanwhile finds nothing to free: it runs
once the listing is made, when allocations count towards it again.

Listings that overlap share one pause, in turns, so that clients listing back to back (`ls -w`
every 2 s, two dashboards, each listing ~3 s at 100,000 jobs) cannot keep cycles from being
collected for good: once one of a pause's listings has ended, a listing that begins belongs
to the next pause, which begins as the last of this one's ends, with a collection of the
young generations. That one walks every object made since the collector went off, the ended
listings' leftovers and the next ones' as far as they got (~0.12 s for one listing's 600,000,
where 3 full collections took 1.1 s of each); the collector itself, and with it collections
of the oldest generation, stays off for as long as listings keep overlapping.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0
"""How many are inside collector_paused, on any thread (a listing's thread, the loop)."""
_was_on = False


class _Turn:
    """One pause of the collector, and those inside it."""

    def __init__(self) -> None:
        self.inside = 0
        self.full = False
        """One of its own has left: those who come now wait for the next."""


_turns: deque[_Turn] = deque()
"""The pause under way first, then those that wait for it to end."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside (the whole process: a daemon's other threads too, for as
    long): the first in turns it off, the last out back on, whatever thread each is on (a
    listing read on its thread while the loop lists too: listing_reader.py); in between, a
    young collection each time a pause ends with others waiting for theirs (the module's
    docstring says why)."""
    global _inside, _was_on
    with _lock:
        if not _inside:
            _was_on = gc.isenabled()
            gc.disable()
        _inside += 1
        if not _turns or _turns[-1].full:
            _turns.append(_Turn())
        mine = _turns[-1]
        mine.inside += 1
    try:
        yield
    finally:
        if _left(mine):
            gc.collect(1)  # (outside the lock: a finalizer it runs may pause it too)


def _left(turn: _Turn) -> bool:
    """One of `turn` has left: True when that ended the pause under way and others wait for
    theirs, which begins with a young collection."""
    global _inside
    with _lock:
        _inside -= 1
        turn.inside -= 1
        turn.full = True
        if turn is not _turns[0] or turn.inside:
            return False
        while _turns and not _turns[0].inside:  # (those whose own have all left meanwhile)
            _turns.popleft()
        if not _turns and _was_on:
            gc.enable()
        return bool(_turns) and _was_on


@contextmanager
def importing() -> Iterator[None]:
    """A command's modules imported with no cycle collection, then their objects frozen
    (gc.freeze): kept out of every later collection, the one at exit too.

    Importing what `gpuherd run` needs allocates some 100,000 objects, which live as long as
    the process and are in no cycle to free: on the way to the first job's start they set off
    ~40 collections (4-7 ms), then walks of them all in later ones and at exit (~10 ms of
    CPU). Frozen only when something was imported (not again and again in a process that
    calls the CLI many times, a test's: what it holds then would never be collected)."""
    before = len(sys.modules)
    with collector_paused():
        yield
    if len(sys.modules) > before:
        gc.freeze()
