"""The jobs no dependency ties to another, and their cancel in one statement per table (a part
of Store): what `kill` and `rm` of a whole sweep do in bulk (service_bulk.py).

A kill wrote a job at a time (its row, its event, a look for the jobs waiting for it, each in
a savepoint of its own): ~3,600 statements for 600 jobs, 2.6 s of CPU for 40,000. A job that
waits for none and that none waits for changes no other job as it ends, so a verb may end all
such jobs at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from gpuherd import store_rows as rows
from gpuherd.core.model import Outcome
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.store_reads import ID_CHUNK


class LoneJobs:
    """Mixed into Store, which provides the connection and transactions."""

    _db: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def lone_states(self, ids: Sequence[int]) -> dict[int, JobState]:
        """The state of each job of `ids` that waits for no job and that no job waits for
        (no row of `deps` names it, met or not): its end changes no other job."""
        found: dict[int, JobState] = {}
        for start in range(0, len(ids), ID_CHUNK):
            chunk = list(ids[start : start + ID_CHUNK])
            marks = ",".join("?" * len(chunk))
            tied = {
                row[0]
                for row in self._db.execute(
                    f"SELECT job FROM deps WHERE job IN ({marks})"
                    f" UNION SELECT dep FROM deps WHERE dep IN ({marks})",
                    chunk * 2,
                )
            }
            for job_id, state in self._db.execute(
                f"SELECT id, state FROM jobs WHERE id IN ({marks})", chunk
            ):
                if job_id not in tied:
                    found[job_id] = JobState(state)
        return found

    def cancel_lone(self, states: Mapping[int, JobState], now: float, message: str) -> None:
        """Cancel these waiting jobs (their states, by id), each one lone (lone_states), as
        Store.update_job cancels one: its row (ended now, never started, outcome cancelled)
        and its `cancel` event, in one statement each for them all. (update_job also moves on
        the jobs waiting for it: a lone job has none.)"""
        outcome = rows.outcome_columns(Outcome(OutcomeKind.CANCELLED, message=message))
        cancelled = (now, *outcome.values())
        with self.transaction():
            self._db.executemany(
                "UPDATE jobs SET started_at = NULL, ended_at = ?, outcome = ?, exit_code = ?,"
                " signal = ?, message = ?, state = 'cancelled' WHERE id = ?",
                [(*cancelled, job_id) for job_id in states],
            )
            self._db.executemany(
                "INSERT INTO events(job_id, at, event, from_state, to_state, detail)"
                " VALUES (?, ?, 'cancel', ?, 'cancelled', ?)",
                [(job_id, now, state.value, message) for job_id, state in states.items()],
            )
