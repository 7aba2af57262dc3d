"""When a queued job could first start, kept in its `queued_at` (a part of Store's writes, in
the caller's transaction).

Starvation reservations count a job's wait from it (core/placement.py, `reserve-after`): how
long a job that could run has waited. A job is queued before it may start when it waits for
other jobs (--after, --after-any, --after-fail) or for its --retry-delay; Store.update_job
sets `queued_at` as it enters `queued`, and these move it on to when it may start: the end of
the last job it waited for, the end of its delay, an edit that drops what it waited for.
Counted from its submission, a job `--after` one that ran 6 hours had "waited" 6 hours the
moment that one ended, and held GPUs at once, idle, with no backfill before it.

Only ever moved forward (a later time), so each end may move it: a job that waits for two
jobs ends with the later end. Placement reads `queued_at` as it is, at no cost per pass.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from gpuherd.core.model import JobSpec
from gpuherd.store_batch import insert_deps
from gpuherd.store_rows import UNMET

_WAITERS_READY = (
    "UPDATE jobs SET queued_at = ? WHERE state = 'queued' AND queued_at < ?"
    " AND id IN (SELECT job FROM deps WHERE dep = ?)"  # (through deps_dep: ~10 us an end)
)
_STILL_WAITS = (  # (a dependency not met: core/deps.MEETS)
    f"SELECT 1 FROM deps d JOIN jobs j ON j.id = d.dep WHERE d.job = ? AND {UNMET} LIMIT 1"
)


def dependency_ended(db: sqlite3.Connection, dep_id: int, now: float) -> None:
    """`dep_id` ended (in any end) at `now`: the queued jobs that wait for it may start from now
    (one that still waits for another job moves on again when that one ends; one it leaves
    for ever unmet is cancelled: engine_endings.cancel_waiters)."""
    db.execute(_WAITERS_READY, (now, now, dep_id))


def new_deps(db: sqlite3.Connection, job_id: int, spec: JobSpec, now: float) -> None:
    """The jobs `job_id` waits for from `now` on, as `spec` names them (`edit --after`). One
    that waited for some job may wait no more: if queued, it may start from now on."""
    waited = db.execute(_STILL_WAITS, (job_id,)).fetchone() is not None
    db.execute("DELETE FROM deps WHERE job = ?", (job_id,))
    insert_deps(db, [(job_id, spec)])
    if waited:
        db.execute(
            "UPDATE jobs SET queued_at = ? WHERE id = ? AND state = 'queued' AND queued_at < ?",
            (now, job_id, now),
        )


def retry_waits_over(db: sqlite3.Connection, ids: Sequence[int]) -> None:
    """The jobs' --retry-delay is over: they may start, from its end (their release_at) on."""
    db.executemany(
        "UPDATE jobs SET queued_at = MAX(queued_at, release_at), release_at = NULL WHERE id = ?",
        [(i,) for i in ids],
    )
