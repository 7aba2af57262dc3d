"""Checkpoints of herd.db's write-ahead log, on a thread of their own.

SQLite copies the log into the database file (a checkpoint) in the commit that takes the log
past `wal_autocheckpoint` pages, and with `synchronous = NORMAL` that checkpoint syncs both
files: ~3.5 ms on the event loop every few hundred commits, the slowest hand-offs from one
job's exit to the next one's start (the daemon's W3 p99, benchmarks/). Here a thread with a
connection of its own runs PASSIVE checkpoints: it never waits for the writer nor blocks it,
and SQLite lets go of Python's GIL while it copies and syncs. The daemon's own connection
keeps an automatic checkpoint as a backstop, far out (BACKSTOP_PAGES), for a thread that fell
behind or could not open the database.

A checkpoint copies the log only up to the last commit before it; the log file starts over
from its beginning at the first commit after a checkpoint that left nothing behind, and that
commit syncs the log's new header (SQLite does so under `synchronous = NORMAL`): ~0.4 ms more
for it on this kind of machine. So the thread does not checkpoint after every commit, which
made every hand-off between jobs a few hundred ms apart pay that sync: it checkpoints once
BURST_COMMITS commits have piled up, or once the database has been quiet for QUIET seconds
(an idle queue's herd.db is whole). Under load with no pause at all (a queue of thousands of
trivial jobs) commits come while each checkpoint copies, so none leaves nothing behind and
the log does not start over: it grows to the backstop, whose checkpoint in a commit then
finds most of it copied already (measured: 41 MB of log after 3,000 `true` jobs, the same
with a checkpoint 50 ms after every burst).

In a quiet spell the thread also gives the space of removed jobs back to the disk, and cuts
the log back (store_space.py).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from functools import partial
from pathlib import Path

from gpuherd.errors import HerdError
from gpuherd.store_reader import FileId, file_id
from gpuherd.store_schema import aside_command
from gpuherd.store_space import give_back, prepare

log = logging.getLogger("gpuherd.store")

BACKSTOP_PAGES = 10_000
"""The daemon's connection checkpoints itself past this many pages of log (~40 MB)."""
BURST_COMMITS = 64
"""Commits since the last checkpoint that call for the next at once."""
QUIET = 2.0
"""Seconds without a commit after which what the log holds is checkpointed."""
CLOSE_WAIT = 5.0
"""Seconds a closing store waits for a checkpoint under way."""


def replaced_while_running(database: Path, running: bool) -> str:
    """What to do about a herd.db replaced (or removed) while the daemon ran: the README's
    restore, done again once the daemon has stopped."""
    stop = "stop the daemon (`gpuherd daemon stop`), then " if running else ""
    name = database.name
    return (
        f"{database} was replaced while the daemon ran (a backup put in its place?): the "
        f"daemon went on writing the file it had open, whose {name}-wal SQLite would apply to "
        f"the new one; {stop}move {name}, {name}-wal and {name}-shm aside together "
        f"(`{aside_command(database)}`), copy the backup in again as {name}, and "
        "`gpuherd daemon start`"
    )


def replaced_note(database: Path) -> Path:
    """herd.db-replaced: left beside herd.db by a daemon that found it replaced, so that the
    next start knows the herd.db-wal there is that daemon's, not the new file's (nothing in
    the two files ties one to the other). Named so that the restore's `mv herd.db* aside/`
    moves it aside with them."""
    return database.with_name(f"{database.name}-replaced")


def note_replaced(database: Path, replaced: bool) -> None:
    """Leave (or, for a herd.db found to be the file opened after all, remove) the note."""
    note = replaced_note(database)
    with contextlib.suppress(OSError):  # (a note that cannot be written: the log says it)
        if replaced:
            note.write_text(f"{replaced_while_running(database, running=False)}\n")
        else:
            note.unlink(missing_ok=True)


def refuse_the_log_of_a_replaced_database(database: Path) -> None:
    """A start after a daemon that ran on a replaced herd.db: SQLite would apply that
    daemon's herd.db-wal to the new herd.db (undoing the restore, and mixing the pages of two
    databases). Two stats; the note goes once no such log is left (moved aside, removed)."""
    note = replaced_note(database)
    if not note.exists():
        return
    if database.with_name(f"{database.name}-wal").exists():
        raise HerdError(replaced_while_running(database, running=False))
    note_replaced(database, replaced=False)


class Checkpointer:
    """Runs PASSIVE checkpoints of one database on its own thread, when `due()` says."""

    def __init__(self, path: Path, opened: FileId | None = None) -> None:
        self._path = path
        self._opened = opened
        """The file the store opened: another one at `path` is a herd.db replaced."""
        self.replaced = False
        self._changed = threading.Condition()
        self._commits = 0
        """Commits since the last checkpoint began."""
        self._last_commit = 0.0
        self._stop = False
        self._thread: threading.Thread | None = None
        self._owed_since: float | None = None
        """Since when a quiet spell's checkpoint and give-back (store_space.py) are owed
        without a commit to come (a burst's, a give-back left undone): QUIET after it."""
        self._give_back_failed = False
        self._begun = 0
        """Write transactions begun on the store: one begun during a give-back stops it."""

    def begins(self) -> None:
        """A write transaction of the store begins: a give-back under way stops at its next
        chunk. The writer waits for SQLite's lock in its busy handler, whose retries lost
        every race with the next chunk, and nothing else tells it waits: a commit waited for
        the whole give-back (~80-450 ms for 48 MiB; past the busy timeout it failed)."""
        self._begun += 1

    def due(self) -> None:
        """A commit was made: checkpoint when it is time (the thread starts at the first)."""
        if self._thread is None and not self._stop:
            self._thread = threading.Thread(target=self._serve, name="gpuherd-wal", daemon=True)
            self._thread.start()
        with self._changed:
            self._commits += 1
            self._last_commit = time.monotonic()
            if self._commits == 1 or self._commits >= BURST_COMMITS:
                self._changed.notify()

    def close(self) -> bool:
        """Stop the thread (after a checkpoint under way), before the store's own connection
        closes: the last connection to close checkpoints what is left. Whether the thread
        has ended, its connection closed (not if it is still at work after CLOSE_WAIT)."""
        with self._changed:
            self._stop = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join(CLOSE_WAIT)
            if self._thread.is_alive():
                return False
            self._thread = None
        return True

    def _time_to_checkpoint(self) -> bool | None:
        """Wait until it is time for a checkpoint: False after a burst of commits, True in a
        quiet spell (QUIET seconds without a commit since the last one, or since a give-back
        left undone); None once the store closes."""
        with self._changed:
            while not self._stop:
                if self._commits >= BURST_COMMITS:
                    self._commits = 0
                    # The burst may have ended before this thread counted it (a `clean`'s,
                    # on a busy machine): no commit is then to come, and its quiet spell,
                    # which gives the removed jobs' space back, would wait for the next one.
                    if self._owed_since is None:
                        self._owed_since = self._last_commit
                    return False
                if self._commits == 0 and self._owed_since is None:
                    self._changed.wait()
                    continue
                since = max(self._last_commit, self._owed_since or 0.0)
                quiet_left = since + QUIET - time.monotonic()
                if quiet_left <= 0:
                    self._commits = 0
                    return True
                self._changed.wait(quiet_left)
            return None

    def _still_quiet(self, begun: int) -> bool:
        """No commit since the quiet spell's checkpoint, no write begun since there were
        `begun`, and the store stays open."""
        return self._commits == 0 and self._begun == begun and not self._stop

    def _noticed_replaced(self) -> None:
        """Say once in daemon.log that herd.db is another file than the one opened (a backup
        copied over it while the daemon runs): its writes go on to the file it has open, and
        the log beside the new herd.db is its own, which SQLite applies to whatever herd.db
        is there next. A stat per checkpoint, which follows commits: none while idle."""
        if self.replaced or self._opened is None or file_id(self._path) == self._opened:
            return
        self.replaced = True
        log.warning("%s", replaced_while_running(self._path, running=True))
        note_replaced(self._path, replaced=True)  # (a daemon killed before its stop, too)

    def _serve(self) -> None:
        self._noticed_replaced()  # (before this thread opens `path`: another file, then)
        try:
            # timeout 0: the thread never waits for the engine's writes (store_space.py).
            db = sqlite3.connect(self._path, isolation_level=None, timeout=0)
            db.execute("PRAGMA synchronous = NORMAL")  # as the engine's: checkpoints sync
            prepare(db, self._path)
        except sqlite3.Error as exc:
            log.warning("checkpoints of %s stay in the daemon's commits: %s", self._path, exc)
            return
        failed = False
        with contextlib.closing(db):
            while (quiet := self._time_to_checkpoint()) is not None:
                self._noticed_replaced()
                try:
                    # fetchall(): the statement ends, and with it its hold on the log (a held
                    # read would keep the log from starting over).
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # a full disk, say: the next commits try again
                    if not failed:
                        log.warning("a checkpoint of %s failed: %s", self._path, exc)
                    failed = True
                    if self._owed_since is not None:  # (not at once: QUIET from now)
                        self._owed_since = time.monotonic()
                    continue
                failed = False
                if quiet:
                    self._give_back(db)

    def _give_back(self, db: sqlite3.Connection) -> None:
        """store_space.give_back in a quiet spell; what it leaves undone (the engine wrote,
        a reader held the log) is tried again in the next one."""
        try:
            done = give_back(db, self._path, partial(self._still_quiet, self._begun))
        except sqlite3.Error as exc:
            # Another failure (a full disk) waits for the next commits' quiet spell.
            done = getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_BUSY
            if done and not self._give_back_failed:
                log.warning("giving %s's free space back failed: %s", self._path, exc)
            self._give_back_failed = done
        else:
            self._give_back_failed = False
        self._owed_since = None if done else time.monotonic()
