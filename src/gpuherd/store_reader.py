"""The store's reads on a second, read-only connection, for a thread of the daemon's own: a
listing of 100,000 jobs read there leaves the event loop (the engine's, the API's) free.

herd.db is in WAL mode, so a read transaction on this connection sees one consistent
snapshot (every commit before it began, none after) while the engine goes on writing on its
own connection: a listing made of several queries (the waiting jobs, the running ones, a
count) shows each job once, in one state, whatever starts or ends meanwhile. Only committed
changes are seen, as a verb acknowledges only committed ones.

It reads the file the engine's Store opened, and no other: a herd.db replaced, moved aside
or restored while the daemon runs is another file, which the engine does not write (it
keeps its own open), and whose write-ahead log may be the old one's. So `opens_the_same`
is checked before each listing; a reader whose path names another file is closed, and the
listing is read through the engine's connection, as every other verb is.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from gpuherd.store_reads import JobReads, RowJobs, env_cache
from gpuherd.store_schema import busy_timeout_ms
from gpuherd.store_views import JobViews

FileId = tuple[int, int]
"""(device, inode): which file a path names."""


def file_id(path: Path) -> FileId | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class ReadOnlyStore(JobReads, JobViews):
    """The job reads of Store (store_reads.py, store_views.py) on a connection of its own that
    cannot write (`mode=ro`): used by one thread only, the one that opened it."""

    def __init__(self, path: Path, expected: FileId) -> None:
        self._db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        self._db.isolation_level = None  # BEGIN and COMMIT are snapshot()'s
        self._db.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
        self._env_cache = env_cache(self._db)
        self._ready_jobs = RowJobs()
        self.expected = expected
        if not self.opens_the_same(path):  # replaced between the check and the open
            self.close()
            raise sqlite3.OperationalError(f"{path} is no longer the daemon's database")

    def opens_the_same(self, path: Path) -> bool:
        """Whether `path` still names the file this reader (and the engine) has open."""
        return file_id(path) == self.expected

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the database as it was at the first."""
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("ROLLBACK")  # nothing written: ends the snapshot

    def interrupt(self) -> None:
        """Abort the query under way (any thread may call it: the daemon's stop)."""
        self._db.interrupt()

    def close(self) -> None:
        self._db.close()
