"""The store's reads for people: counts, a page of jobs with search, a job's attempts and events,
the queue positions `move` needs (and their renumbering), the held jobs whose `--begin` time
comes, and what waits on what (a part of Store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from gpuherd import store_rows as rows
from gpuherd.core.deps import kinds_never_met
from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.model import Attempt, Job
from gpuherd.core.recovery import UNWATCHED_LIKE
from gpuherd.core.states import WAITING_STATES, JobState, in_start_order
from gpuherd.store_ready import retry_waits_over
from gpuherd.store_rows import ANY_JOB, JobFilter

READY = (
    "state = 'queued' AND release_at IS NULL"  # not waiting to retry
    " AND NOT EXISTS (SELECT 1 FROM deps d JOIN jobs j ON j.id = d.dep"
    f" WHERE d.job = jobs.id AND {rows.UNMET})"
)
"""SQL over `jobs`: a queued job that may start now (placement reads only these)."""
START_ORDER = "priority DESC, position, id"
"""The order waiting jobs start in (placement reads the queued ones so: Store.queued_ready)."""
PAUSE_CHUNK = 500
"""Jobs per query of their events (SQLite before 3.32 takes 999 parameters at most)."""
UNWATCHED_HOLDS = (
    "SELECT job_id, detail FROM events INDEXED BY events_holds"
    " WHERE event IN ('hold', 'retry-held') AND detail LIKE ? ORDER BY id"
)
"""The hold events that name a run found running unwatched (Store.unwatched_holds): read
through their partial index (migration 8), not by a scan of every event (15 ms per 400,000
events); its WHERE must say `event IN ('hold', 'retry-held')` as the index does."""


FILES_OF_THEIR_OWN = f"(stdout_file != '{FOLDER_LOGS[0]}' OR stderr_file != '{FOLDER_LOGS[1]}')"
"""SQL over `attempts`: an attempt that recorded a file of the user's choosing (not NULL)."""


@dataclass(frozen=True)
class EventRow:
    job_id: int
    at: float
    event: str
    from_state: str | None
    to_state: str
    detail: str | None


class JobViews:
    """Mixed into Store, which provides the connection and row mapping."""

    _db: sqlite3.Connection

    def _job(self, row: tuple[Any, ...]) -> Job:
        raise NotImplementedError

    def _jobs_of(self, found: Iterable[tuple[Any, ...]]) -> list[Job]:
        raise NotImplementedError  # (store_reads.JobReads: passing_over_damaged's)

    def count_jobs(self, states: Sequence[JobState] = (), match: JobFilter = ANY_JOB) -> int:
        where, args = rows.filters(states, match)
        return int(self._db.execute(f"SELECT COUNT(*) FROM jobs {where}", args).fetchone()[0])

    def project_names(self, most: int) -> list[str]:
        """The first `most` projects jobs have, by name (the jobs page's `?project=` of none)."""
        rows = self._db.execute(
            "SELECT DISTINCT project FROM jobs WHERE project IS NOT NULL AND project != ''"
            " ORDER BY project LIMIT ?",
            (most,),
        )
        return [str(row[0]) for row in rows]

    def attempt_known(self, job_id: int, attempt: int) -> bool:
        """Whether the queue knows attempt `attempt` of job `job_id` (has started it): a job's
        process it does not know is no leftover of an ended attempt (LeftoverSweeper). By its
        row, not the job's count: a job held past an attempt found running that the database
        did not know (engine_held_runs.hold) counts it, and that attempt is no leftover."""
        row = self._db.execute(
            "SELECT 1 FROM attempts WHERE job_id = ? AND number = ?", (job_id, attempt)
        ).fetchone()
        return row is not None

    def attempt_files(self, job_id: int, attempt: int) -> tuple[str, str] | None:
        """Where attempt `attempt` of the job wrote its stdout and stderr, as it recorded them
        when it started (Attempt.files); None: it recorded none (or is not known)."""
        row = self._db.execute(
            "SELECT stdout_file, stderr_file FROM attempts WHERE job_id = ? AND number = ?",
            (job_id, attempt),
        ).fetchone()
        return None if row is None or row[0] is None else (row[0], row[1])

    def latest_attempt_files(self, jobs: Sequence[Job]) -> dict[int, tuple[str, str]]:
        """The files (as attempt_files) each of these jobs' latest attempt recorded, by job id,
        leaving out those the job's files as they are now name too (recorded_or_named gives
        them alike): the folder's logs of a job that names no file of its own, as most do.
        Read through the attempts' key, the folder logs left in SQLite: `ls --json` of
        100,000 jobs took ~0.15 s more to read them all, ~0.06 s so."""
        named = [job for job in jobs if job.spec.output or job.spec.error]
        plain = [job for job in jobs if not (job.spec.output or job.spec.error)]
        found: dict[int, tuple[str, str]] = {}
        for some, which in ((plain, FILES_OF_THEIR_OWN), (named, "stdout_file IS NOT NULL")):
            for job_id, out, err in self._latest_attempts(some, "stdout_file, stderr_file", which):
                found[job_id] = (out, err)
        return found

    def latest_peaks(self, jobs: Sequence[Job]) -> dict[int, int]:
        """The most GPU memory each of these jobs' latest attempt was seen to use, recorded as
        it ended (jobs with a reading): what `ls` and `show` give an ended job, whose run
        the engine no longer watches."""
        found = self._latest_attempts(jobs, "peak_mem", "peak_mem IS NOT NULL")
        return {job_id: int(peak) for job_id, peak in found}

    def _latest_attempts(
        self, jobs: Sequence[Job], columns: str, which: str
    ) -> Iterator[tuple[Any, ...]]:
        """(job id, *columns) of each of these jobs' latest attempt where `which` (SQL over
        `attempts`) holds, PAUSE_CHUNK jobs at a time."""
        latest = {job.id: job.attempt for job in jobs if job.attempt}
        ids = sorted(latest)
        for first in range(0, len(ids), PAUSE_CHUNK):
            chunk = ids[first : first + PAUSE_CHUNK]
            marks = ",".join("?" * len(chunk))
            for job_id, number, *values in self._db.execute(
                f"SELECT job_id, number, {columns} FROM attempts"
                f" WHERE job_id IN ({marks}) AND {which}",
                chunk,
            ):
                if latest[job_id] == number:
                    yield (job_id, *values)

    def attempt_folders(self, states: Sequence[str]) -> list[tuple[int, int, str | None]]:
        """(id, attempt count, folder) of every job in these states: enough to look for a
        later attempt on disk without building each Job (a restart, engine_recovery.py)."""
        marks = ",".join("?" * len(states))
        rows = self._db.execute(
            f"SELECT id, attempt, folder FROM jobs WHERE state IN ({marks})", tuple(states)
        )
        return [(int(i), int(n), folder) for i, n, folder in rows]

    def waiters_of(self, job_id: int, state: JobState) -> list[int]:
        """Jobs that are still queued or held and wait for `job_id`, which ended in `state`,
        to end otherwise (`--after` a job that failed, `--after-fail` one that succeeded):
        they can never run."""
        kinds = kinds_never_met(state)
        if not kinds:
            return []
        rows = self._db.execute(
            "SELECT d.job FROM deps d JOIN jobs j ON j.id = d.job"
            f" WHERE d.dep = ? AND d.kind IN ({','.join('?' * len(kinds))})"
            " AND j.state IN ('queued', 'held')",
            (job_id, *kinds),
        )
        return [int(r[0]) for r in rows]

    def waiting_for(self, job_id: int) -> set[int]:
        """The jobs that wait for `job_id`, directly or through others (`--after` and
        `--after-any`, whatever their state): what it must not wait for (`edit --after`)."""
        rows = self._db.execute(
            "WITH RECURSIVE waiting(id) AS (SELECT job FROM deps WHERE dep = ? UNION"
            " SELECT d.job FROM deps d JOIN waiting w ON d.dep = w.id) SELECT id FROM waiting",
            (job_id,),
        )
        return {int(r[0]) for r in rows}

    def unmet_deps(self, job_id: int) -> list[tuple[int, str, str]]:
        """(id, state, kind) of each job `job_id` still waits for; one that has ended (in a
        finished state) can no longer meet the dependency (core/deps.never_met)."""
        found = self._db.execute(
            "SELECT j.id, j.state, d.kind FROM deps d JOIN jobs j ON j.id = d.dep"
            f" WHERE d.job = ? AND {rows.UNMET} ORDER BY j.id",
            (job_id,),
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in found]

    def count_queued_ahead(self, job: Job, most: int) -> int:
        """How many queued jobs come before `job` in dispatch order, counted up to `most`
        (a count costs about 0.2 µs per job along the index; queues run to 100,000s)."""
        row = self._db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM jobs INDEXED BY jobs_queued"
            " WHERE state = 'queued' AND priority > ? UNION ALL"
            " SELECT 1 FROM jobs INDEXED BY jobs_queued WHERE state = 'queued'"
            " AND priority = ? AND (position, id) < (?, ?) LIMIT ?)",
            (job.priority, job.priority, job.position, job.id, most),
        ).fetchone()
        return int(row[0])

    def counts(self) -> dict[str, int]:
        found = self._db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state")
        return {str(state): int(n) for state, n in found}

    def waiting_in_order(
        self,
        match: JobFilter,
        limit: int | None,
        states: Collection[JobState] = WAITING_STATES,
    ) -> list[Job]:
        """Up to `limit` waiting jobs (of `states`: queued, held) as `ls` shows them, in the
        order they are to start (priority, then place: `move` and `priority` show), a held
        job where it would start once released."""
        sql, args = self._in_start_order(rows.JOB_COLUMNS, states, match)
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._jobs_of(self._db.execute(sql, args))

    def waiting_ids(
        self, match: JobFilter, states: Collection[JobState], limit: int | None = None
    ) -> list[int]:
        """The ids of up to `limit` waiting jobs (of `states`) that match, in the order they
        are to start."""
        sql, args = self._in_start_order("id, priority, position", states, match)
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [int(row[0]) for row in self._db.execute(sql, args)]

    def _in_start_order(
        self, columns: str, states: Collection[JobState], match: JobFilter
    ) -> tuple[str, list[Any]]:
        """A SELECT of `columns` (with priority, position and id) of the jobs of `states`
        (queued, held) that match, in START_ORDER, and its arguments. The partial index holds
        the queued jobs in that order; the held ones, usually few, are sorted (100,000 take
        ~15 ms). SQLite merges the two (MERGE (UNION ALL)): no sort of the queue, and a LIMIT
        reads no more rows than it answers (~0.3 ms for `ls` of 100,000 queued)."""
        clauses, args = match.clauses()
        mine = "".join(f" AND {clause}" for clause in clauses)
        sources = {
            JobState.QUEUED: "jobs INDEXED BY jobs_queued WHERE state = 'queued'",
            JobState.HELD: "jobs WHERE state = 'held'",
        }
        parts = [f"SELECT {columns} FROM {sources[s]}{mine}" for s in sources if s in states]
        return " UNION ALL ".join(parts) + f" ORDER BY {START_ORDER}", args * len(parts)

    def page_jobs(
        self,
        states: Sequence[JobState],
        match: JobFilter,
        search: str,
        offset: int,
        limit: int,
    ) -> tuple[int, list[Job]]:
        """How many jobs match, and `limit` of them from `offset`: newest first, or of waiting
        states alone, in the order they are to start. `search`: `#12` is job 12; other text
        is a LIKE on name and command (digits: the id too, first)."""
        where, args = rows.filters(states, match)
        clauses = [where.removeprefix("WHERE ")] if where else []
        # Waiting jobs alone: in the order they start (a sort: ~20 ms for 100,000 queued).
        order = START_ORDER if in_start_order(states) else "id DESC"
        number = search.lstrip("#")
        is_number = number.isascii() and number.isdigit()
        number_id = int(number) if is_number and len(number) < 19 else -1
        if search.startswith("#") and is_number:
            clauses.append(f"id = {number_id}")
        elif search:
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            like = "name LIKE ? ESCAPE '\\' OR command LIKE ? ESCAPE '\\'"
            args += [f"%{escaped}%"] * 2
            if number_id >= 0:
                like += f" OR id = {number_id}"
                order = f"id = {number_id} DESC, {order}"
            clauses.append(f"({like})")
        where = "WHERE " + " AND ".join(clauses) if clauses else ""
        total = int(self._db.execute(f"SELECT COUNT(*) FROM jobs {where}", args).fetchone()[0])
        if limit <= 0 or offset >= total:
            return total, []
        sql = f"SELECT {rows.JOB_COLUMNS} FROM jobs {where} ORDER BY {order} LIMIT ? OFFSET ?"
        return total, self._jobs_of(self._db.execute(sql, [*args, limit, offset]))

    def neighbour_position(self, priority: int, position: float, before: bool) -> float | None:
        """Position of the queued job next to `position` in the same priority class."""
        op, order = ("<", "DESC") if before else (">", "ASC")
        row = self._db.execute(
            "SELECT position FROM jobs WHERE state IN ('queued', 'held') AND priority = ? AND"
            f" typeof(position) != 'text' AND position {op} ? ORDER BY position {order} LIMIT 1",
            (priority, position),
        ).fetchone()
        return None if row is None else float(row[0])

    def renumber_positions(self, priority: int) -> None:
        """Spread the queued and held jobs of one priority class apart again, keeping their
        order: `move --before` halves a gap, and a float has only ~52 halvings in it. Each
        job takes one of the class's ids as its position (the smallest for the first), so
        the gaps are whole again and a job submitted later (a larger id) still comes last."""
        ids = [
            int(row[0])
            for row in self._db.execute(
                "SELECT id FROM jobs WHERE state IN ('queued', 'held') AND priority = ?"
                " ORDER BY position, id",
                (priority,),
            )
        ]
        self._db.executemany(
            "UPDATE jobs SET position = ? WHERE id = ?", zip(sorted(ids), ids, strict=True)
        )

    def queue_front(self) -> tuple[int, float] | None:
        """(priority, position) of the first job in dispatch order among queued and held; not a
        row changed by hand to hold text (damaged, store_row_types.py), sorted first: int('x')."""
        row = self._db.execute(
            "SELECT priority, position FROM jobs WHERE state IN ('queued', 'held')"
            " AND typeof(priority) = 'integer' AND typeof(position) IN ('integer', 'real')"
            " ORDER BY priority DESC, position LIMIT 1"
        ).fetchone()
        return None if row is None else (int(row[0]), float(row[1]))

    def attempts(self, job_id: int) -> list[Attempt]:
        cursor = self._db.execute(
            f"SELECT {rows.ATTEMPT_COLUMNS} FROM attempts WHERE job_id = ? ORDER BY number",
            (job_id,),
        )
        return [rows.attempt_from_row(r) for r in cursor]

    def events(self, job_id: int | None = None, limit: int = 1000) -> list[EventRow]:
        where = "WHERE job_id = ?" if job_id is not None else ""
        args: tuple[int, ...] = (job_id,) if job_id is not None else ()
        rows = self._db.execute(
            "SELECT job_id, at, event, from_state, to_state, detail FROM events "
            f"{where} ORDER BY id LIMIT {int(limit)}",
            args,
        )
        return [EventRow(*r) for r in rows]

    def pause_events(self, job_ids: Sequence[int]) -> dict[int, list[tuple[float, str]]]:
        """The pause and resume events (time, name) of these jobs, by job, in order: what
        their run times leave out (core/run_time.py)."""
        found: dict[int, list[tuple[float, str]]] = {}
        for job_id, at, event, _ in self._events_named(job_ids, ("pause", "resume")):
            found.setdefault(job_id, []).append((at, event))
        return found

    def hold_details(self, job_ids: Sequence[int]) -> dict[int, str]:
        """The detail of each of these jobs' latest hold (`hold`, `retry-held`) event: why
        `ls` says a held job is held (service.py)."""
        rows = self._events_named(job_ids, ("hold", "retry-held"))
        return {job_id: detail or "" for job_id, _, _, detail in rows}  # the latest wins

    def unwatched_holds(self) -> list[tuple[int, str]]:
        """(job id, detail) of every hold event that names a run of its job found running
        unwatched (core.recovery.unwatched; engine_held_runs.hold), whatever the job's state
        now: what a restart watches again. Read once per start, through the index of the
        hold events alone (UNWATCHED_HOLDS)."""
        rows = self._db.execute(UNWATCHED_HOLDS, (UNWATCHED_LIKE,))
        return [(int(job_id), str(detail)) for job_id, detail in rows]

    def _events_named(
        self, job_ids: Sequence[int], names: tuple[str, ...]
    ) -> Iterator[tuple[int, float, str, str | None]]:
        """(job id, time, name, detail) of these jobs' events so named, by job, in order.
        Asked PAUSE_CHUNK jobs at a time, each through the events' job index: cheap for a
        listing's jobs, and never over SQLite's limit on a query's parameters (`ls --all
        --limit 0`)."""
        kinds = ",".join("?" * len(names))
        for first in range(0, len(job_ids), PAUSE_CHUNK):
            chunk = list(job_ids[first : first + PAUSE_CHUNK])
            marks = ",".join("?" * len(chunk))
            yield from self._db.execute(
                f"SELECT job_id, at, event, detail FROM events WHERE job_id IN ({marks})"
                f" AND event IN ({kinds}) ORDER BY job_id, id",
                (*chunk, *names),
            )

    def next_release(self) -> float | None:
        """The earliest `--begin` time of a held job, or end of a queued job's wait to retry
        (`--retry-delay`); None: no job waits for either."""
        times = [
            float(row[0])
            for index, state in (("jobs_release", "held"), ("jobs_retry_wait", "queued"))
            for row in self._db.execute(
                f"SELECT release_at FROM jobs INDEXED BY {index} WHERE state = '{state}'"
                " AND release_at IS NOT NULL ORDER BY release_at LIMIT 1"
            )
        ]
        return min(times, default=None)

    def end_retry_waits(self, now: float) -> list[int]:
        """Queued jobs whose `--retry-delay` ended by `now`: they may start (their ids)."""
        ids = [
            int(row[0])
            for row in self._db.execute(
                "SELECT id FROM jobs INDEXED BY jobs_retry_wait WHERE state = 'queued'"
                " AND release_at IS NOT NULL AND release_at <= ?",
                (now,),
            )
        ]
        retry_waits_over(self._db, ids)
        return ids

    def due_releases(self, now: float) -> list[Job]:
        """Held jobs whose `--begin` time is `now` or earlier, earliest first."""
        rows_ = self._db.execute(
            f"SELECT {rows.JOB_COLUMNS} FROM jobs INDEXED BY jobs_release"
            " WHERE state = 'held' AND release_at IS NOT NULL AND release_at <= ?"
            " ORDER BY release_at, id",
            (now,),
        )
        return self._jobs_of(rows_)
