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
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside (the whole process: a daemon's other threads too, for as
    long); nested, only the outermost turns it back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
