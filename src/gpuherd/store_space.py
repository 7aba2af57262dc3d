"""herd.db's disk space given back after jobs are removed (`gpuherd clean`, `rm`).

SQLite keeps the pages a delete frees on a list inside the file and reuses them, so a file
never shrinks by itself; and the write-ahead log stays at the largest size it ever reached
(tens of MB under a queue of thousands of short jobs: store_checkpoint.py). Here:

- A new herd.db is made with `auto_vacuum = INCREMENTAL` (only possible before its first
  table): SQLite then keeps the map that lets `PRAGMA incremental_vacuum(N)` move N pages
  from the file's end into free ones and cut the end off, a transaction of its own.
- The checkpoint thread (store_checkpoint.py), on its own connection, gives the free pages
  back once the database has been quiet for a while: CHUNK_PAGES at a time (~1 ms each,
  measured), looking between chunks whether the engine committed meanwhile (then it stops
  and waits for the next quiet spell). WAL allows one writer: a commit of the engine that
  comes during a chunk waits for it (the engine's busy timeout), never fails; the thread's
  connection never waits (busy timeout 0): it tries again at the next quiet spell.
- A herd.db made by an older gpuherd (auto_vacuum NONE) changes mode only by a VACUUM,
  which copies every page in use and holds the write lock meanwhile (~65 ms for 4-15 MB in
  use, measured on a shared 2-core machine). It runs once, in a quiet spell with at least
  RECLAIM_MIN_PAGES free, and only while at most CONVERT_MAX_USED_PAGES are in use: right after a
  `clean` most of the file is free and the copy is short; a queue that keeps more has its
  space reused but not given back (README: "Where things are").
- The log is cut back to JOURNAL_LIMIT by the first commit after each time it starts over
  (`journal_size_limit`), and to nothing by a TRUNCATE checkpoint in a quiet spell when it
  is larger: what stays is what a burst of commits between checkpoints needs.

`gpuherd run`'s scratch store (no log, a file that dies with the run) needs none of this.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("gpuherd.store")

JOURNAL_LIMIT = 4 * 1024 * 1024
"""Bytes the write-ahead log is cut back to when it starts over (SQLite's default
automatic checkpoint, 1,000 pages, is about as large): a burst of commits between two
checkpoints fits in it, so a busy queue does not pay to grow the file again each time."""
RECLAIM_MIN_PAGES = 256
"""Free pages (1 MiB) worth giving back; fewer are left for the next jobs' rows."""
CHUNK_PAGES = 256
"""Pages given back per transaction: ~1 ms on a loaded 2-core machine."""
CONVERT_MAX_USED_PAGES = 4096
"""Pages in use (16 MiB) up to which an older herd.db is converted by a VACUUM."""

_NONE, _INCREMENTAL = 0, 2
"""`PRAGMA auto_vacuum`'s values."""


def prepare(db: sqlite3.Connection, path: Path) -> None:
    """On a connection just opened to the daemon's herd.db, before its journal mode is set
    (which writes the file's first page): a new, empty file is made with incremental
    vacuum; every connection cuts the log back to JOURNAL_LIMIT when it starts over."""
    try:
        new = path.stat().st_size == 0
    except OSError:
        new = False  # (SQLite's own open says what is wrong with the file)
    if new:
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
    db.execute(f"PRAGMA journal_size_limit = {JOURNAL_LIMIT}")


def give_back(db: sqlite3.Connection, path: Path, still_quiet: Callable[[], bool]) -> bool:
    """Give the free pages of herd.db and the log's excess back to the disk, on `db` (the
    checkpoint thread's connection, busy timeout 0), just after a checkpoint in a quiet
    spell; stop as soon as `still_quiet()` is False. True if nothing is left to do, False
    if the next quiet spell should try again (the engine wrote meanwhile, a reader held
    the log)."""
    free = _pragma(db, "freelist_count")
    if free >= RECLAIM_MIN_PAGES:
        mode = _pragma(db, "auto_vacuum")
        if mode == _INCREMENTAL:
            while free and still_quiet():
                # executescript: the pragma yields a row per page moved, which execute()
                # would stop at (one page a call); a script steps it to its end.
                db.executescript(f"PRAGMA incremental_vacuum({CHUNK_PAGES})")
                free = _pragma(db, "freelist_count")
            if free:
                return False
        elif mode == _NONE and (used := _pragma(db, "page_count") - free) <= CONVERT_MAX_USED_PAGES:
            if not still_quiet():
                return False
            if not _room_to_convert(db, path, used):  # (tried again in a later quiet spell)
                return _log_cut_back(db, path)
            began = time.monotonic()
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # what the VACUUM below makes
            db.execute("VACUUM")
            took = time.monotonic() - began
            log.info("%s now gives removed jobs' space back (VACUUM: %.3f s)", path, took)
        # The pages moved are in the log: copied into herd.db, which is cut short then.
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    return _log_cut_back(db, path)


def _room_to_convert(db: sqlite3.Connection, path: Path, used: int) -> bool:
    """Whether herd.db's disk has room for the VACUUM's copies of the `used` pages: the log
    takes them all, and its temporary copy may be on that disk too. One that ran out filled
    the disk, and left the log that large: the disk stayed full (jobs' logs, submissions)
    until the daemon stopped, the VACUUM tried again in each quiet spell."""
    try:
        room = shutil.disk_usage(path.parent).free
    except OSError:
        return False
    return room >= 2 * used * _pragma(db, "page_size") + JOURNAL_LIMIT


def _log_cut_back(db: sqlite3.Connection, path: Path) -> bool:
    """The log emptied if it is larger than JOURNAL_LIMIT (after a checkpoint copied it:
    the TRUNCATE one then only resets it, holding the write lock for no copy); False if
    a reader or a writer kept it."""
    try:
        size = path.with_name(path.name + "-wal").stat().st_size
    except OSError:
        return True
    if size <= JOURNAL_LIMIT:
        return True
    busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return not busy


def _pragma(db: sqlite3.Connection, name: str) -> int:
    return int(db.execute(f"PRAGMA {name}").fetchone()[0])
