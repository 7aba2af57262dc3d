"""New jobs' rows and their dependencies, inserted in the caller's transaction
(Store.add_jobs). A big batch binds the values its rows share once: a sweep's jobs differ in
their id, name, command and folder alone, and binding 35 values a row took 10,000 rows
~120 ms, the daemon's loop held by the durable transaction; its differing columns go through
a temporary table, and one INSERT ... SELECT adds the shared values (~55 ms)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from gpuherd.core.deps import KINDS
from gpuherd.core.model import JobSpec
from gpuherd.store_rows import NEW_JOB_COLUMNS

BIG_BATCH = 500
"""Rows from which a batch binds its shared values once (below, one statement a row costs
less than the temporary table's)."""
_NAMES = NEW_JOB_COLUMNS.split(", ")


def insert_new_jobs(db: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert the rows, each of NEW_JOB_COLUMNS, in order."""
    if len(rows) < BIG_BATCH:
        marks = ", ".join("?" * len(_NAMES))
        db.executemany(f"INSERT INTO jobs({NEW_JOB_COLUMNS}) VALUES ({marks})", rows)
        return
    columns = list(zip(*rows, strict=True))
    # Values equal in Python are stored alike (1, 1.0 and True in a numeric column; the text
    # columns hold str or None): the first row's value stands for all.
    shared = {n for n, column in enumerate(columns) if column.count(column[0]) == len(rows)}
    differing = [n for n in range(len(_NAMES)) if n not in shared]
    names = ", ".join(_NAMES[n] for n in differing)
    db.execute(f"CREATE TEMP TABLE IF NOT EXISTS new_jobs({NEW_JOB_COLUMNS})")
    db.execute("DELETE FROM temp.new_jobs")  # (rolled back with the caller's transaction too)
    db.executemany(
        f"INSERT INTO temp.new_jobs({names}) VALUES ({', '.join('?' * len(differing))})",
        zip(*(columns[n] for n in differing), strict=True),
    )
    picked = ", ".join("?" if n in shared else name for n, name in enumerate(_NAMES))
    db.execute(
        f"INSERT INTO jobs({NEW_JOB_COLUMNS}) SELECT {picked} FROM temp.new_jobs ORDER BY rowid",
        [columns[n][0] for n in sorted(shared)],
    )
    db.execute("DELETE FROM temp.new_jobs")


def insert_deps(db: sqlite3.Connection, specs: Iterable[tuple[int, JobSpec]]) -> None:
    """The dependencies of each job (id, spec), in the caller's transaction."""
    db.executemany(  # (a job is in one of its lists: core/deps.kept_apart)
        "INSERT OR IGNORE INTO deps(job, dep, kind) VALUES (?, ?, ?)",
        [
            (job_id, dep, kind)
            for job_id, spec in specs
            for kind in KINDS
            for dep in getattr(spec, kind)
        ],
    )
