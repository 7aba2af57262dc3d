"""The store's connection to herd.db (opened, and opened again on a new write-ahead log), and
herd.db-wal deleted (or replaced) while the daemon runs.

SQLite opens the log once per connection and goes on writing the file it has open: a `rm
herd.db-wal` (someone freeing the log's tens of MB) unlinks a file the daemon still commits
to. Nothing is lost while the daemon runs (its checkpoints copy that file into herd.db), but
a crash (kill -9, the OOM killer) before the next checkpoint lost every commit since the last
one, acknowledged submissions and saved settings, and the next jobs were given their ids
again. So after each commit the store stats the log's path (one stat, ~1-2 us against a
commit's tens) and compares it with the file it opened; on a difference it copies the whole
log into herd.db and syncs it (a TRUNCATE checkpoint, through the file it has open), then
opens its connection again, and SQLite makes a new log at the path.

Every connection of the daemon to herd.db must use that one log, as they share one index of
it (herd.db-shm, shared in the process): a connection left on the old file would read pages
from it where the index says they are in the new one. The checkpoint thread's connection is
closed first and a new thread is made after (none meanwhile: its open would make a new log
while the store writes the old one); the listing reader's is dropped before its next read
(`Store.renewals` changed: listing_reader.py). A read under way holds the checkpoint back (it
waits for it), and the checkpoint leaves the old file empty: a read begun between the two
fails (it is made on the loop) rather than reading a stale page.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from gpuherd.store_checkpoint import BACKSTOP_PAGES
from gpuherd.store_reader import file_id
from gpuherd.store_schema import busy_timeout_ms, open_failed, require_journal
from gpuherd.store_space import prepare

log = logging.getLogger("gpuherd.store")

RETRY = 1.0
"""Seconds before a renewal of the log that could not be made now (a reader held the log
past the busy timeout, a full disk) is tried again, at a commit: not a wait per commit."""


def connection(path: Path) -> sqlite3.Connection:
    """A connection to `path` as the store makes it (then `set_up`)."""
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


def set_up(
    db: sqlite3.Connection,
    path: Path,
    scratch: bool,
    check: Callable[[sqlite3.Connection, Path], None] | None = None,
) -> sqlite3.Connection:
    """`db`, just opened to `path`, set up as the store uses it (`check`: before any write)."""
    db.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
    if check is not None:
        check(db, path)
    if scratch:
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
    else:  # space given back after `clean` (before the journal mode: store_space.py)
        prepare(db, path)
    wanted = "MEMORY" if scratch else "WAL"
    require_journal(path, str(db.execute(f"PRAGMA journal_mode = {wanted}").fetchone()[0]), wanted)
    # NORMAL in WAL mode survives a crash of the daemon (kill -9); only a power cut can drop
    # the last commits, and FULL would cost an fsync per state change (a job's start and
    # end): only `transaction(durable=True)` (a submission) pays for one.
    db.execute(f"PRAGMA synchronous = {'OFF' if scratch else 'NORMAL'}")
    if not scratch:
        db.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
    db.execute("PRAGMA foreign_keys = ON")
    return db


class LogWatch:
    """herd.db-wal as the store opened it: `lost()` after each commit says whether the path
    names another file now (or none)."""

    def __init__(self, database: Path) -> None:
        """Made once the store's connection has read (SQLite has its log open)."""
        self._database = database
        self.path = database.with_name(f"{database.name}-wal")
        self._opened = file_id(self.path)
        self._retry_at = 0.0
        self._failed = False
        self._how = ""
        """What was seen first at the path: a new log another connection (the listing's, a
        backup's) made there since is not what happened."""

    def lost(self) -> bool:
        """Whether the log the store writes is no longer at its path (one stat), and a
        renewal is due."""
        found = file_id(self.path)
        if found == self._opened:
            return False
        if self._opened is None:  # (none found at the open: SQLite made it since)
            self._opened = found
            return False
        self._how = self._how or ("deleted" if found is None else "replaced by another file")
        return time.monotonic() >= self._retry_at

    def ignore(self) -> None:
        """Leave the path as it is: herd.db itself is another file (or gone with its home),
        which the store's `replaced()` says, with what to do."""
        self._opened, self._how = file_id(self.path), ""

    def renew(
        self, db: sqlite3.Connection, others_closed: Callable[[], bool]
    ) -> sqlite3.Connection:
        """Copy the log the store writes into herd.db and sync it, close `db` and open the
        connection again on a new log: the store's connection from now on (`db` itself where
        that cannot be done now: tried again RETRY later). `others_closed()` closes the
        store's other connections (the checkpoint thread's): False if one is still open."""
        how = self._how
        try:
            if not others_closed():
                raise sqlite3.OperationalError("the checkpoint thread is still at work")
            if db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:  # (busy)
                raise sqlite3.OperationalError("another connection was reading it")
        except sqlite3.Error as exc:
            self._retry_at = time.monotonic() + RETRY
            if not self._failed:
                log.warning(
                    "%s was %s while the daemon ran, and the commits in it could not be "
                    "copied into %s yet (%s): trying again at the next commits",
                    self.path,
                    how,
                    self._database,
                    exc,
                )
            self._failed = True
            return db
        db.close()  # (every page of the log is in herd.db, synced: nothing of it is needed)
        try:
            db = set_up(connection(self._database), self._database, scratch=False)
        except sqlite3.DatabaseError as exc:  # (herd.db is whole: a restart goes on with it)
            raise open_failed(self._database, exc) from exc
        self._opened, self._failed, self._how = file_id(self.path), False, ""
        log.warning(
            "%s was %s while the daemon ran: every commit in it was copied into %s, and "
            "the daemon writes a new %s; nothing was lost (never delete it by hand: it is "
            "cut back by itself, and goes when the daemon stops)",
            self.path,
            how,
            self._database,
            self.path.name,
        )
        return db
