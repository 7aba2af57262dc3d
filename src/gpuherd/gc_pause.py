"""Python's cycle collector held off while a big listing is built or decoded.

Building a listing of 100,000 jobs allocates some 600,000 containers (rows, jobs, views), which
all survive: each allocation burst starts a collection, and the full ones walk every object
of the process. In the daemon, 3 full collections took 1.1 s of a 2.5 s `ls --json` of
100,000 queued jobs; in the client, decoding its answer took 0.7 s instead of 0.5. None of
those objects is part of a cycle, so a collection meanwhile finds nothing to free: it runs
once the listing is made, when allocations count towards it again.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0
"""How many are inside collector_paused, on any thread (a listing's thread, the loop)."""
_was_on = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside (the whole process: a daemon's other threads too, for as
    long): the first in turns it off, the last out back on, whatever thread each is on (a
    listing read on its thread while the loop lists too: listing_reader.py)."""
    global _inside, _was_on
    with _lock:
        if not _inside:
            _was_on = gc.isenabled()
            gc.disable()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if not _inside and _was_on:
                gc.enable()


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
