"""The attempts' rows: written as an attempt is made, spawned (its pid), changed and dropped
(a part of Store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from gpuherd import store_rows as rows
from gpuherd.core.model import Attempt


class AttemptWrites:
    """Mixed into Store, which provides the connection and transactions."""

    _db: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def record_pids(self, spawned: Sequence[tuple[int, int, int, float]]) -> None:
        """The pids of spawned attempts, as (job id, attempt, pid, spawned at), in one batch."""
        if not spawned:
            return
        with self.transaction():
            self._db.executemany(
                "UPDATE jobs SET pid = ? WHERE id = ?", [(pid, job) for job, _, pid, _ in spawned]
            )
            self._db.executemany(
                "UPDATE attempts SET pid = ? WHERE job_id = ? AND number = ?",
                [(pid, job, number) for job, number, pid, _ in spawned],
            )
            self._db.executemany(
                "INSERT INTO events(job_id, at, event, from_state, to_state, detail)"
                " VALUES (?, ?, 'spawn', NULL, '', ?)",
                [(job, at, f"pid {pid}") for job, _, pid, at in spawned],
            )

    def add_attempt(self, attempt: Attempt) -> None:
        row = rows.new_attempt_row(attempt)
        names, marks = ", ".join(row), ",".join("?" * len(row))
        with self.transaction():
            self._db.execute(
                f"INSERT OR REPLACE INTO attempts({names}) VALUES ({marks})", tuple(row.values())
            )

    def update_attempt(self, job_id: int, number: int, **changes: Any) -> None:
        if "outcome" in changes:
            changes.update(rows.outcome_columns(changes.pop("outcome")))
        cols = rows.set_clause(tuple(changes))
        with self.transaction():
            self._db.execute(
                f"UPDATE attempts SET {cols} WHERE job_id = ? AND number = ?",
                (*changes.values(), job_id, number),
            )

    def record_peaks(self, peaks: Sequence[tuple[int, int, int]]) -> None:
        """Running attempts' GPU memory peaks so far, (job id, attempt, peak) each: their
        end records their last (a restarted daemon holds a job to its peak, as this one)."""
        if peaks:
            with self.transaction():
                self._db.executemany(
                    "UPDATE attempts SET peak_mem = ? WHERE job_id = ? AND number = ?",
                    [(peak, job_id, number) for job_id, number, peak in peaks],
                )

    def delete_attempt(self, job_id: int, number: int) -> None:
        with self.transaction():
            self._db.execute(
                "DELETE FROM attempts WHERE job_id = ? AND number = ?", (job_id, number)
            )
