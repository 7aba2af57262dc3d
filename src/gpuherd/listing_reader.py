"""`ls` read off the event loop: a listing of 100,000 jobs held the daemon's loop for ~1.7 s,
and with it every other client and the engine (no job started on a freed GPU meanwhile).

The daemon's listings are read on one thread of their own, through a read-only connection
(store_reader.py), in one read transaction: the jobs, their views, the counts, the hold and
pause events, all of one snapshot. What only the engine knows is taken on the loop: before,
the clock and the running jobs' peak memory; after, why each job waits (service_reasons.py,
worded once per shape of job), WORD_CHUNK jobs at a time with the loop let go between. The
answer is encoded as JSON off the loop too, ENCODE_CHUNK views at a time (the C encoder holds
Python's lock for a whole call). The jobs and views are let go of off the loop as well, a
chunk at a time (let_go), the cycle collector held off until they are gone (gc_pause.py).

A reader is the daemon's only: `gpuherd run`'s scratch database is locked by its one
connection, and `run` serves no listing. Where the reader cannot read (the database file
replaced, a read refused), the listing is read on the loop, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_core import to_json

from gpuherd.core.model import Job
from gpuherd.core.nearest_now import LeftOut
from gpuherd.gc_pause import collector_paused
from gpuherd.listing import ListingQuery, listed, peaks_of, stored_views, worded
from gpuherd.service_reasons import explainer
from gpuherd.store_reader import ReadOnlyStore

if TYPE_CHECKING:
    from gpuherd.engine import Engine
    from gpuherd.store import Store

log = logging.getLogger("gpuherd.listing")

T = TypeVar("T")

WORD_CHUNK = 2000
"""Reasons worded on the loop at a time (~2 ms), before it serves whatever else waits."""
ENCODE_CHUNK = 1000
"""Views encoded at a time; Python's lock is let go between (every 5 ms at most)."""
FREE_CHUNK = 1000
"""Jobs or views freed at a time by let_go (~2 ms), Python's lock let go between."""

Built = tuple[list[Job], list[dict[str, Any]], dict[int, str], LeftOut]


class ListingReader:
    """The daemon's listing thread and its read-only connection (opened there, at the first
    listing, and used there alone)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._path = store.path
        self._expected = store.file_id
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="gpuherd-listing")
        self._reader: ReadOnlyStore | None = None
        self._renewals = 0
        """store.renewals when the reader opened: another number, it reads a deleted log."""
        self._closed = False

    async def listing(
        self, engine: Engine, query: ListingQuery
    ) -> tuple[list[dict[str, Any]], LeftOut] | None:
        """Service.ls's answer, or None when the reader cannot read: read it on the loop."""
        now, peaks, layout = engine.clock(), peaks_of(engine.live), engine.layout

        def build(reads: ReadOnlyStore) -> Built:
            jobs, left = listed(reads, query)
            views, holds = stored_views(reads, jobs, now, peaks, layout)
            return jobs, views, holds, left

        # Held off from the read to the jobs' end (and by the caller until the views' end):
        # back on meanwhile, the collections it made walked the listing's 600,000 objects,
        # on the loop as it worded the reasons (0.1-0.3 s of it held for 100,000 jobs).
        with collector_paused():
            got = await self.read(build)
            if got is None:
                return None
            jobs, views, holds, left = got
            explain = explainer(engine, holds)  # what the engine knows now, on its loop
            for start in range(0, len(jobs), WORD_CHUNK):
                if start:
                    await asyncio.sleep(0)  # a tick, a small request, in between
                worded(views, jobs, explain, start, start + WORD_CHUNK)
            await asyncio.get_running_loop().run_in_executor(self._pool, let_go, jobs)
        return views, left

    async def read(self, build: Callable[[ReadOnlyStore], T]) -> T | None:
        """`build(reader)` on the listing thread, in one read transaction; None when the
        reader cannot read (closed, the database file replaced, a read refused)."""
        if self._closed or self._expected is None:
            return None
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._read, build)

    def _read(self, build: Callable[[ReadOnlyStore], T]) -> T | None:
        reader = self._open()
        if reader is None:
            return None
        try:
            # Held off on this thread as on the loop (gc_pause.py), and more so: a full
            # collection (~0.35 s over a listing's objects) holds Python's lock, the loop too.
            with collector_paused(), reader.snapshot():
                return build(reader)
        except sqlite3.Error as exc:  # interrupted by close(), or a read refused
            if not self._closed:
                log.warning("listing read on the loop instead: %s", exc)
            self._drop()
            return None

    def _open(self) -> ReadOnlyStore | None:
        if self._reader is not None and not self._reader.opens_the_same(self._path):
            log.warning("%s is another file now: listings read through the engine's", self._path)
            self._drop()
        elif self._reader is not None and self._renewals != self._store.renewals:
            self._drop()  # herd.db-wal deleted, the store on a new one since (store_wal.py)
        if self._reader is None and not self._closed and self._expected is not None:
            try:
                self._renewals = self._store.renewals  # (before the open: one after, seen)
                self._reader = ReadOnlyStore(self._path, self._expected)
            except sqlite3.Error:
                return None  # replaced, or not readable: the loop reads it, as the engine can
        return self._reader

    def _drop(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def close(self) -> None:
        """The daemon stops: the read under way is interrupted, the thread joined (no read
        left running past the store's close), the connection closed on its thread."""
        self._closed = True
        if (reader := self._reader) is not None:
            # The thread may have closed it meanwhile (_drop: herd.db replaced, a read
            # refused): its ProgrammingError stopped the daemon's stop before the engine's.
            with contextlib.suppress(sqlite3.ProgrammingError):
                reader.interrupt()
        self._pool.submit(self._drop)
        self._pool.shutdown(wait=True)


def encoded(views: Sequence[Mapping[str, Any]], rest: Mapping[str, Any]) -> bytes:
    """`{"jobs": views, **rest}` as the route's response model encoded it on the loop (pydantic's
    encoder: 2.3x the speed of json.dumps's C one on a listing's views), ENCODE_CHUNK views
    at a time (run it off the loop: asyncio.to_thread)."""
    parts: list[bytes | memoryview] = [b'{"jobs":[']
    for start in range(0, len(views), ENCODE_CHUNK):
        if start:
            parts.append(b",")
        parts.append(memoryview(to_json(views[start : start + ENCODE_CHUNK]))[1:-1])
    parts.append(b"]," + to_json(rest)[1:] if rest else b"]}")
    return b"".join(parts)  # (one copy of the whole: a listing's answer is ~50 MB)


def let_go(items: list[Any]) -> None:
    """Empties `items` (a listing's jobs, its views), FREE_CHUNK at a time from the end, freeing
    them on the calling thread (run it off the loop). Freed where their last reference went,
    at the end of the route, 100,000 jobs' views and jobs held the loop ~0.25 s: one free, in
    C, Python's lock held throughout. Call it with the collector held off (gc_pause.py)."""
    while items:
        del items[-FREE_CHUNK:]
