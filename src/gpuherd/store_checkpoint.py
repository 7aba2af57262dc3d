"""Checkpoints of herd.db's write-ahead log, on a thread of their own.

SQLite copies the log into the database file (a checkpoint) in the commit that takes the log
past `wal_autocheckpoint` pages, and with `synchronous = NORMAL` that checkpoint syncs both
files: ~3.5 ms on the event loop every few hundred commits, the slowest hand-offs from one
job's exit to the next one's start (the daemon's W3 p99, benchmarks/). Here a thread with a
connection of its own runs a PASSIVE checkpoint shortly after commits (one for a burst of
them): it never waits for the writer nor blocks it, and SQLite lets go of Python's GIL while
it copies and syncs. The daemon's own connection keeps an automatic checkpoint as a backstop,
far out (BACKSTOP_PAGES), for a thread that fell behind or could not open the database.

A checkpoint copies the log only up to the last commit before it; the log file starts over
from its beginning at the first commit after a checkpoint that left nothing behind, so under
load with no pause at all the log grows until the backstop (or a pause) comes.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger("gpuherd.store")

BACKSTOP_PAGES = 10_000
"""The daemon's connection checkpoints itself past this many pages of log (~40 MB)."""
CHECKPOINT_DELAY = 0.05
"""Seconds from a commit to the checkpoint: the burst's other commits join that one."""
CLOSE_WAIT = 5.0
"""Seconds a closing store waits for a checkpoint under way."""


class Checkpointer:
    """Runs PASSIVE checkpoints of one database on its own thread, when `due()` says."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._due = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None

    def due(self) -> None:
        """Commits were made: checkpoint soon (the thread starts at the first)."""
        if self._thread is None and not self._stop:
            self._thread = threading.Thread(target=self._serve, name="gpuherd-wal", daemon=True)
            self._thread.start()
        self._due.set()

    def close(self) -> None:
        """Stop the thread (after a checkpoint under way), before the store's own connection
        closes: the last connection to close checkpoints what is left."""
        self._stop = True
        self._due.set()
        if self._thread is not None:
            self._thread.join(CLOSE_WAIT)
            self._thread = None

    def _serve(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None)
        except sqlite3.Error as exc:
            log.warning("checkpoints of %s stay in the daemon's commits: %s", self._path, exc)
            return
        failed = False
        with contextlib.closing(db):
            while not self._stop:
                self._due.wait()
                time.sleep(CHECKPOINT_DELAY)
                self._due.clear()
                try:
                    # fetchall(): the statement ends, and with it its hold on the log (a held
                    # read would keep the log from starting over).
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # a full disk, say: the next commits try again
                    if not failed:
                        log.warning("a checkpoint of %s failed: %s", self._path, exc)
                    failed = True
                else:
                    failed = False
