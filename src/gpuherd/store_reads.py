"""The store's reads of whole jobs: one by id, many by id (or which ids are jobs'), a listing
by state and filter, and the queued jobs that may start, in the order they start (a part of
Store).

store_views.py holds the other reads (counts, pages, events, queue positions).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from gpuherd import store_rows as rows
from gpuherd.core.model import Job
from gpuherd.core.states import JobState
from gpuherd.damaged_rows import DamagedRows
from gpuherd.errors import StoreError
from gpuherd.store_rows import ANY_JOB, JobFilter
from gpuherd.store_views import READY, START_ORDER

ID_CHUNK = 500
"""Ids per query of get_jobs and known_ids (SQLite before 3.32 takes 999 parameters at most)."""
MANY_COUNTS = 64
"""Past this many GPU counts queued, placement reads the queue as one stream (gpus_queued)."""


def env_cache(db: sqlite3.Connection) -> Callable[[int], Mapping[str, str]]:
    """The environments of jobs by id, read through `db`, the last 64 kept: a sweep's
    thousands of jobs share one."""

    def load(env_id: int) -> Mapping[str, str]:
        row = db.execute("SELECT json FROM envs WHERE id = ?", (env_id,)).fetchone()
        try:  # (shared by a sweep's jobs: each of them is set aside, named with the row)
            env = json.loads(row[0]) if row else {}
            if not isinstance(env, dict):
                raise ValueError(f"not an object: {row[0]!r:.40}")
        except (ValueError, TypeError) as exc:
            raise rows.damaged(f"environment {env_id}'s row (table `envs`)", exc) from None
        return env

    return lru_cache(maxsize=64)(load)


class RowJobs:
    """The jobs placement read last, kept by id with the row each was built from. A pass reads
    the same queued jobs as the one before (a whole window of 2,000 when none of them fits the
    GPUs free), and building a Job from its row is most of what reading one costs: a job whose
    row has not changed is the Job built before (a row makes its job: the environment it names
    by id is never changed under that id, as env_cache relies on too).

    A row that cannot be read (herd.db changed by another program) gives None: its job is set
    aside, not started, said once in the log (DamagedRows), and the pass goes on with the
    others. It is not kept: read again by each pass, it is started once its row, or the
    environment row it names, is set back (a few such rows: a pass's cost is the others)."""

    LIMIT = 8000
    """Jobs kept at most (all dropped past it): a pass's window and a few GPU counts' streams
    (each up to engine_scan.SCAN_LIMIT, 2,000)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[tuple[Any, ...], Job]] = {}
        self.set_aside = DamagedRows("not started until its row is set back")
        """The queued jobs whose rows the scheduler could not read, with why."""

    def job(self, row: tuple[Any, ...], build: Callable[[tuple[Any, ...]], Job]) -> Job | None:
        kept = self._kept.get(row[0])
        if kept is not None and kept[0] == row:
            return kept[1]
        if len(self._kept) >= self.LIMIT:
            self._kept.clear()
        try:
            job = build(row)
        except StoreError as exc:
            self.set_aside.note(row[0], str(exc))
            return None
        if self.set_aside:  # (a row built anew: only one set aside before may be mended)
            self.set_aside.mended(row[0])
        self._kept[row[0]] = (row, job)
        return job

    SLACK = 256
    """Jobs kept beyond those a whole read returned before they are looked for: a pass reads
    the whole queue while it is short (each tick, at a run's end), and a look at every kept
    job each time cost `gpuherd run` ~50 us a job."""

    def keep_only(self, seen: set[int]) -> None:
        """After a read of the whole ready queue, forget the jobs it did not return once
        SLACK of them may be kept: they left it (started, ended, removed). They stayed until
        LIMIT was reached: an idle daemon held up to 8,000 ended jobs, ~14 MB."""
        if len(self._kept) > len(seen) + self.SLACK:
            for job_id in self._kept.keys() - seen:
                del self._kept[job_id]


class JobReads:
    """Mixed into Store, which provides the connection and row mapping."""

    _db: sqlite3.Connection
    _env_cache: Callable[[int], Mapping[str, str]]
    """env_cache(self._db): each connection its own (a reader thread's is not the loop's)."""
    _ready_jobs: RowJobs
    """What queued_ready built, for the next pass."""

    _passing_over: dict[int, str] | None = None
    """While passing_over_damaged: the jobs whose rows could not be read, with why."""

    def _job(self, row: tuple[Any, ...]) -> Job:
        return rows.job_from_row(row, self._env_cache(row[4]))

    @contextlib.contextmanager
    def passing_over_damaged(self) -> Iterator[dict[int, str]]:
        """Meanwhile get_jobs, list_jobs and waiting_in_order leave out a job whose row cannot
        be read (a StoreError: herd.db changed by another program), noted in the dict given
        (id: why), instead of failing the whole read: one damaged row costs its job alone.
        Nested: the outer one's dict (a caller that says them, around one that only goes on)."""
        if self._passing_over is not None:
            yield self._passing_over
            return
        passed: dict[int, str] = {}
        self._passing_over = passed
        try:
            yield passed
        finally:
            self._passing_over = None

    def _jobs_of(self, found: Iterable[tuple[Any, ...]]) -> list[Job]:
        jobs = []
        for row in found:
            try:
                jobs.append(self._job(row))
            except StoreError as exc:
                if self._passing_over is None:
                    raise
                self._passing_over[row[0]] = str(exc)
        return jobs

    @property
    def set_aside_queued(self) -> DamagedRows:
        """The queued jobs the scheduler's reads (queued_ready) set aside."""
        return self._ready_jobs.set_aside

    def get_job(self, job_id: int) -> Job | None:
        row = self._db.execute(
            f"SELECT {rows.JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)
        ).fetchone()
        return None if row is None else self._job(row)

    def get_jobs(self, ids: Sequence[int]) -> dict[int, Job]:
        return {job.id: job for job in self._jobs_of(self._rows_of(rows.JOB_COLUMNS, ids))}

    def run_over(self, jobs: Sequence[Job]) -> set[int]:
        """Those of these jobs, run in a folder named for them (a sweep point's), whose folder
        a later job (a higher id) has too: its run moved their files to previous-runs/<n>/
        (sweep_folders.with_own_run finds them). One query, only where one of them ran in a
        folder named for it, of the jobs from the first of those on, along the id. `folder`
        has no index: 100,000 jobs are scanned in ~12 ms for up to ID_CHUNK folders named,
        their folders grouped in ~60-90 ms for more (a listing of ~1.5 s, of that many)."""
        ran = [(job.id, folder) for job in jobs if (folder := job.spec.folder) and job.attempt]
        if not ran:
            return set()
        folders = {folder for _, folder in ran}
        args: list[Any] = [min(job_id for job_id, _ in ran)]
        where = "folder IS NOT NULL"
        if len(folders) <= ID_CHUNK:
            where, args = f"folder IN ({','.join('?' * len(folders))})", [*args, *folders]
        # (the first job's own row counted: a folder none ran in after it is one job's)
        latest = dict(
            self._db.execute(
                f"SELECT folder, MAX(id) FROM jobs WHERE id >= ? AND {where}"
                " GROUP BY folder HAVING COUNT(*) > 1",
                args,
            ).fetchall()
        )
        return {job_id for job_id, folder in ran if latest.get(folder, 0) > job_id}

    def deps_kept(self, job_id: int) -> set[int]:
        """The jobs the job waits for, but those removed once they had met that (delete_jobs)."""
        return {row[0] for row in self._db.execute("SELECT dep FROM deps WHERE job = ?", (job_id,))}

    def known_ids(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` that some job has: its id alone is read, not the whole job."""
        return {row[0] for row in self._rows_of("id", ids)}

    def states_of(self, ids: Sequence[int]) -> dict[int, JobState]:
        """The state of each of `ids` that some job has, by id: its state alone is read (a
        wait over 100,000 jobs read them whole, 1 s on the loop; their states: 0.04 s)."""
        return {row[0]: JobState(row[1]) for row in self._rows_of("id, state", ids)}

    def queued_among(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` that are queued jobs (their state alone is read)."""
        return {row[0] for row in self._rows_of("id, state", ids) if row[1] == "queued"}

    def gpus_held_by(self, job_id: int) -> tuple[int, ...] | None:
        """The GPUs a job's row says it runs on, read alone for one whose whole row cannot be
        read: its `assigned`, else its latest attempt's; None if neither reads."""
        for sql in (
            "SELECT assigned FROM jobs WHERE id = ?",
            "SELECT gpus FROM attempts WHERE job_id = ? ORDER BY number DESC LIMIT 1",
        ):
            row = self._db.execute(sql, (job_id,)).fetchone()
            with contextlib.suppress(ValueError, TypeError):
                gpus = json.loads(row[0]) if row else None
                if isinstance(gpus, list) and all(type(gpu) is int and gpu >= 0 for gpu in gpus):
                    return tuple(gpus)
        return None

    def _rows_of(self, columns: str, ids: Sequence[int]) -> Generator[tuple[Any, ...], None, None]:
        for start in range(0, len(ids), ID_CHUNK):
            chunk = list(ids[start : start + ID_CHUNK])
            marks = ",".join("?" * len(chunk))
            yield from self._db.execute(f"SELECT {columns} FROM jobs WHERE id IN ({marks})", chunk)

    def list_jobs(
        self,
        states: Sequence[JobState] = (),
        match: JobFilter = ANY_JOB,
        limit: int | None = None,
        newest_first: bool = False,
        ended_last_first: bool = False,
    ) -> list[Job]:
        order = ENDED_LAST_FIRST if ended_last_first else _by_id(newest_first)
        sql, args = _listing(rows.JOB_COLUMNS, states, match, limit, order)
        return self._jobs_of(self._db.execute(sql, args))

    def list_job_ids(
        self,
        states: Sequence[JobState] = (),
        match: JobFilter = ANY_JOB,
        limit: int | None = None,
        newest_first: bool = False,
        ended_last_first: bool = False,
    ) -> list[int]:
        order = ENDED_LAST_FIRST if ended_last_first else _by_id(newest_first)
        sql, args = _listing("id", states, match, limit, order)
        return [row[0] for row in self._db.execute(sql, args)]

    def queued_ready(self, gpus: int | None = None) -> Generator[Job, None, None]:
        """Queued jobs whose dependencies all succeeded, in dispatch order, read lazily;
        given `gpus`, only those that ask for that many GPUs (0: the CPU-only jobs)."""
        sql = (
            # The partial indexes hold exactly the queued jobs in dispatch order (of one GPU
            # count: jobs_queued_gpus); left to itself SQLite picks jobs_state and sorts the
            # whole queue on every pass.
            f"SELECT {rows.JOB_COLUMNS} FROM jobs"
            + (" INDEXED BY jobs_queued" if gpus is None else " INDEXED BY jobs_queued_gpus")
            + f" WHERE {READY}"
            + ("" if gpus is None else " AND gpus = ?")
            + f" ORDER BY {START_ORDER}"
        )
        cursor = self._db.execute(sql, () if gpus is None else (gpus,))
        seen: set[int] = set()
        try:
            for row in cursor:
                seen.add(row[0])
                if (job := self._ready_jobs.job(row, self._job)) is not None:
                    yield job
            if gpus is None:  # (read to its end: the whole queue)
                self._ready_jobs.keep_only(seen)
        finally:
            # A half-read statement would hold a read snapshot; the caller closes the
            # generator once placement has seen enough.
            cursor.close()

    def starving_queued(self, gpus: int, since: float, within: int) -> bool:
        """Whether one of the first `within` queued jobs of `gpus` GPUs, in dispatch order,
        has been queued since `since` or before (not waiting for a retry): one that might
        hold GPUs (placement's "Starvation"). A look along jobs_queued_gpus, ~0.3 ms per
        2,000 jobs (dependencies are not asked: one that waits for another job says yes)."""
        sql = (
            "SELECT 1 FROM (SELECT queued_at, release_at FROM jobs INDEXED BY jobs_queued_gpus"
            f" WHERE state = 'queued' AND gpus = ? ORDER BY {START_ORDER} LIMIT ?)"
            " WHERE queued_at <= ? AND release_at IS NULL LIMIT 1"
        )
        return self._db.execute(sql, (gpus, within, since)).fetchone() is not None

    def gpus_queued(self) -> list[int] | None:
        """The GPU counts queued jobs ask for, fewest first: the two ends of jobs_queued_gpus
        in one statement (a queue of one count, the usual one, asks no more), then one search
        per count between them; not a scan of the queue. None where one is no whole number (a
        damaged row: the pass reads the queue whole, which sets its job aside, RowJobs), or
        past MANY_COUNTS of them."""
        ends = self._db.execute(_QUEUED_ENDS).fetchone()
        if ends[0] is None:
            return []
        if not all(type(end) is int for end in ends):
            return None
        counts = [ends[0]]
        while counts[-1] != ends[1]:
            (count,) = self._db.execute(_QUEUED_NEXT, (counts[-1],)).fetchone()
            if type(count) is not int or len(counts) >= MANY_COUNTS:
                return None
            counts.append(count)
        return counts


_QUEUED_GPUS = "SELECT {} FROM jobs INDEXED BY jobs_queued_gpus WHERE state = 'queued'"
_QUEUED_ENDS = f"SELECT ({_QUEUED_GPUS.format('MIN(gpus)')}), ({_QUEUED_GPUS.format('MAX(gpus)')})"
_QUEUED_NEXT = _QUEUED_GPUS.format("MIN(gpus)") + " AND gpus > ?"


ENDED_LAST_FIRST = "COALESCE(ended_at, created_at) DESC, id DESC"
"""The finished jobs that ended last first (`ls`'s recent ones, a cut listing's newest;
JobFilter.since's end: a row from an older gpuherd without one, by its submission). By id,
a run that failed after ten later, shorter jobs had ended was left out of `ls`. No index
holds ended_at: each finished job's row is read (along jobs_state, those alone: a big queue's
few finished jobs cost nothing), ~20 ms for 100,000, on the listing thread."""


def _by_id(newest_first: bool) -> str:
    return "id DESC" if newest_first else "id"


def _listing(
    columns: str,
    states: Sequence[JobState],
    match: JobFilter,
    limit: int | None,
    order: str,
) -> tuple[str, list[Any]]:
    """The query of a listing (`columns` of the jobs in `states` that `match`, in `order`: by
    id, or ENDED_LAST_FIRST; at most `limit`) and its arguments: list_jobs' and list_job_ids'."""
    where, args = rows.filters(states, match)
    # Cut and sorted by end, the ids first, then those rows whole: sorted whole, each
    # finished row was read whole (`ls` of 100,000 finished jobs: 43 ms, not 19; `--limit
    # 100`: 120 ms, not 26).
    whole_after = limit is not None and order == ENDED_LAST_FIRST and columns != "id"
    sql = f"SELECT {'id' if whole_after else columns} FROM jobs {where} ORDER BY {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    if whole_after:
        sql = f"SELECT {columns} FROM jobs WHERE id IN ({sql}) ORDER BY {order}"
    return sql, args
