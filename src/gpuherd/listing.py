"""What `ls` and `ls -q` list (Service.ls, Service.ls_ids). `ls`'s in two parts: what the
database says, read through any store (the engine's, or a reader's on its own thread:
store_reader.py), and why each job waits, which only the engine knows, worded on its loop
afterwards (service_reasons.py). `ls -q`'s is the first part alone. What a listing asks
for is one ListingQuery, made where the request is read and passed down as it is.

Only the first part touches no engine state: it may run off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from gpuherd.core.model import Job
from gpuherd.core.nearest_now import NOTHING, LeftOut, shares
from gpuherd.core.output_files import Files
from gpuherd.core.recovery import unwatched_run
from gpuherd.core.run_time import pauses, ran_for, timeout_at
from gpuherd.core.states import (
    FINISHED_STATES,
    LIVE_STATES,
    WAITING_STATES,
    JobState,
    split_waiting,
)
from gpuherd.errors import InvalidValue
from gpuherd.layout import Layout, ListedPaths, listed_paths
from gpuherd.store import Store
from gpuherd.store_reader import ReadOnlyStore
from gpuherd.store_rows import ANY_JOB, JobFilter
from gpuherd.sweep_folders import with_own_run
from gpuherd.wire import job_view

Reads = Store | ReadOnlyStore
Row = TypeVar("Row", Job, int)

RECENT_FINISHED = 10
"""How many finished jobs a plain `ls` shows beside the active ones: those that ended last."""


@dataclass(frozen=True)
class ListingQuery:
    """What a listing asks for (`GET /jobs`, the dashboard's): made once where the request is
    read, its state names checked there (states_named), and passed down as it is."""

    states: tuple[JobState, ...] = ()
    """Only jobs in these states (none: as `all_jobs` says)."""
    match: JobFilter = ANY_JOB
    all_jobs: bool = False
    """Every job; else, without `states`, a plain `ls`: the active ones and the finished ones
    that ended last."""
    limit: int | None = None
    newest_first: bool = False
    """`last`: the jobs by id, the newest first, whatever their state."""


PLAIN_LS = ListingQuery()
"""`gpuherd ls` as it is: the active jobs and the finished ones that ended last."""
LIVE_JOBS = ListingQuery(tuple(LIVE_STATES), all_jobs=True)
"""The jobs running or paused: the dashboard's GPUs' and overview's."""


def states_named(names: Sequence[str]) -> tuple[JobState, ...]:
    """The states named (`?state=held`), or InvalidValue naming the first unknown one. A
    name is taken in any case (`RUNNING`, `Running`), as `ls --state` takes it: the HTTP and
    Python APIs refused what the CLI took."""
    states = []
    for name in names:
        try:
            states.append(JobState(name.lower()))
        except ValueError:
            known = ", ".join(s.value for s in JobState)
            raise InvalidValue(f"unknown state '{name}': use one of {known}") from None
    return tuple(states)


def listed(reads: Reads, query: ListingQuery) -> tuple[list[Job], LeftOut]:
    """The jobs `ls` lists and what `query.limit` left out of those that match (Service.ls
    says which), and the jobs whose rows cannot be read, left out too (LeftOut.unreadable)."""
    with reads.passing_over_damaged() as damaged:
        jobs, left = _listed(reads, query)
    if damaged:
        left = replace(left, unreadable=tuple(sorted(damaged.items())))
    return jobs, left


def _listed(reads: Reads, query: ListingQuery) -> tuple[list[Job], LeftOut]:
    wanted, match, limit = query.states, query.match, query.limit
    if query.newest_first:  # `last`: the job submitted last, whatever its state
        jobs = reads.list_jobs(wanted, match, limit, newest_first=True)
        return jobs, _beyond(reads, wanted, match, limit, len(jobs))
    if wanted or query.all_jobs:
        started, waiting_states = split_waiting(wanted or tuple(JobState))
        if limit is not None:
            return _nearest_now(_Jobs(reads, match), started, waiting_states, limit)
        jobs = reads.list_jobs(started, match) if started else []
        if waiting_states:
            jobs += reads.waiting_in_order(match, None, waiting_states)
        return jobs, NOTHING
    # A plain `ls`: the limit cuts the waiting jobs alone, from the last to start. The
    # finished ones are those that ended last (by id, a long run that failed after later,
    # shorter jobs had ended was left out), listed by id with the running ones.
    waiting = reads.waiting_in_order(match, limit)
    recent = reads.list_jobs(tuple(FINISHED_STATES), match, RECENT_FINISHED, ended_last_first=True)
    live = reads.list_jobs(tuple(LIVE_STATES), match)
    jobs = sorted(recent + live, key=lambda j: j.id) + waiting
    return jobs, _beyond(reads, tuple(WAITING_STATES), match, limit, len(waiting))


def listed_ids(reads: Reads, query: ListingQuery) -> list[int]:
    """The ids `ls -q` lists (Service.ls_ids says which), in the order `ls` lists them, the
    limit cutting them as it cuts `ls`."""
    wanted, match, limit = query.states, query.match, query.limit
    if query.newest_first:  # as `ls` lists them then: the jobs of `wanted` (or any), by id
        return reads.list_job_ids(wanted, match, limit, newest_first=True)
    narrowed = bool(wanted or query.all_jobs)
    if not narrowed:
        wanted = tuple(s for s in JobState if s not in FINISHED_STATES)
    started, waiting_states = split_waiting(wanted or tuple(JobState))
    if narrowed and limit is not None:
        return _nearest_now(_Ids(reads, match), started, waiting_states, limit)[0]
    # Without `wanted`, the running jobs are all listed, as `ls` lists them.
    ids = reads.list_job_ids(started, match) if started else []
    if waiting_states and limit != 0:
        ids += reads.waiting_ids(match, waiting_states, limit)
    return ids


def _beyond(
    reads: Reads, states: Sequence[JobState], match: JobFilter, limit: int | None, shown: int
) -> LeftOut:
    """How many of the jobs of `states` that match are past the `shown` ones listed, counted
    only where the limit may have cut them."""
    if limit is None or shown < limit:
        return NOTHING
    return LeftOut(later=max(0, reads.count_jobs(states, match) - shown))


class _Rows(Generic[Row]):
    """What _nearest_now reads of the jobs that match: whole jobs (_Jobs) or ids (_Ids)."""

    def __init__(self, reads: Reads, match: JobFilter) -> None:
        self.reads, self.match = reads, match

    def every(self, states: Sequence[JobState]) -> list[Row]:
        """The jobs of `states` (the running and paused ones: all are listed)."""
        raise NotImplementedError

    def ended_last(self, states: Sequence[JobState], limit: int) -> list[Row]:
        """Up to `limit` finished jobs of `states`, those that ended last first (by id, a
        long run that ended after later jobs was counted among the `earlier` left out)."""
        raise NotImplementedError

    def next_to_start(self, states: Sequence[JobState], limit: int) -> list[Row]:
        """Up to `limit` waiting jobs of `states`, in the order they are to start."""
        raise NotImplementedError

    def id_of(self, row: Row) -> int:
        raise NotImplementedError

    def count(self, states: Sequence[JobState]) -> int:
        if not states:
            return 0
        if set(states) == FINISHED_STATES:  # (`ls --all`'s, most of a big queue's jobs)
            # Counted as every job less the others: SQLite counts a whole table along its
            # smallest index (~0.02 ms for 100,000 jobs), the finished ones' rows one by one
            # (~7 ms for 100,000).
            others = [state for state in JobState if state not in FINISHED_STATES]
            return self.reads.count_jobs((), self.match) - self.reads.count_jobs(others, self.match)
        return self.reads.count_jobs(states, self.match)


class _Jobs(_Rows[Job]):
    def every(self, states: Sequence[JobState]) -> list[Job]:
        return self.reads.list_jobs(states, self.match)

    def ended_last(self, states: Sequence[JobState], limit: int) -> list[Job]:
        return self.reads.list_jobs(states, self.match, limit, ended_last_first=True)

    def next_to_start(self, states: Sequence[JobState], limit: int) -> list[Job]:
        return self.reads.waiting_in_order(self.match, limit, states)

    def id_of(self, row: Job) -> int:
        return row.id


class _Ids(_Rows[int]):
    def every(self, states: Sequence[JobState]) -> list[int]:
        return self.reads.list_job_ids(states, self.match)

    def ended_last(self, states: Sequence[JobState], limit: int) -> list[int]:
        return self.reads.list_job_ids(states, self.match, limit, ended_last_first=True)

    def next_to_start(self, states: Sequence[JobState], limit: int) -> list[int]:
        return self.reads.waiting_ids(self.match, states, limit)

    def id_of(self, row: int) -> int:
        return row


def _nearest_now(
    rows: _Rows[Row], started: Sequence[JobState], waiting: Sequence[JobState], limit: int
) -> tuple[list[Row], LeftOut]:
    """The rows of a listing by state (or --all) cut to `limit` as core/nearest_now.py says:
    every running or paused job, the finished ones that ended last and the next to start,
    listed as uncut (those that started by id, then the waiting in start order): the
    `earlier` finished jobs left out ended before those kept. At most `limit` rows of each
    side are kept (store_reads.ENDED_LAST_FIRST says what reading the finished ones costs),
    and each side counted only where it filled what was read."""
    live = [s for s in started if s in LIVE_STATES]
    ended = [s for s in started if s not in LIVE_STATES]
    running = rows.every(live) if live else []
    room = max(0, limit - len(running))
    finished = rows.ended_last(ended, room) if ended and room else []
    coming = rows.next_to_start(waiting, room) if waiting and room else []
    finished_count = len(finished) if len(finished) < room else rows.count(ended)
    waiting_count = len(coming) if len(coming) < room else rows.count(waiting)
    kept_finished, kept_waiting = shares(room, finished_count, waiting_count)
    started_rows = sorted(running + finished[:kept_finished], key=rows.id_of)
    left = LeftOut(finished_count - kept_finished, waiting_count - kept_waiting)
    return started_rows + coming[:kept_waiting], left


def stored_views(
    reads: Reads, jobs: Sequence[Job], now: float, peaks: Mapping[int, int], layout: Layout
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The jobs' views (wire.job_view) without their reasons, with where their files are
    (own_paths), and the listed held jobs' latest hold details (what their
    reasons say), from `reads` alone: `now` and the running jobs' peak memory (`peaks`)
    are read from the engine beforehand; an ended job's is the one its attempt recorded."""
    held = [j.id for j in jobs if j.state is JobState.HELD and j.release_at is None]
    holds = reads.hold_details(held)
    recorded, paths = reads.latest_attempt_files(jobs), own_paths(reads, layout, jobs)
    peaks = {**reads.latest_peaks([j for j in jobs if j.state in FINISHED_STATES]), **peaks}
    # A waiting job shows no run time: none is counted.
    ran = [j.id for j in jobs if j.started_at is not None and j.state not in WAITING_STATES]
    events = reads.pause_events(ran) if ran else {}
    views = []
    for job in jobs:
        for_a_run = job.id in holds and unwatched_run(holds[job.id]) is not None
        view = job_view(job, None, peaks.get(job.id), for_a_run)
        paused, paused_at = pauses(events.get(job.id, ()), job.started_at or 0.0, job.ended_at)
        view.update(paused_seconds=paused, paused_at=paused_at)
        times = ran_for(view, now)
        view["seconds"] = times[0] if times else None
        view["timeout_at"] = timeout_at(view)
        view["job_dir"], view["log_files"] = paths(job, recorded.get(job.id))
        views.append(view)
    return views, holds


def own_paths(reads: Reads, layout: Layout, jobs: Sequence[Job]) -> ListedPaths:
    """listed_paths for these jobs, as `show` names each one's paths: a job whose folder a
    later job's run has now (Store.run_over: a sweep point's submitted again) has the logs
    of its own run, in previous-runs/<n>/ (sweep_folders.with_own_run, a read of its
    job.json: for those jobs alone), and the folder it was given as its `job_dir`. They
    were the later run's, whose files the listing named for every job of the point."""
    paths, run_over = listed_paths(layout), reads.run_over(jobs)
    if not run_over:
        return paths

    def own(job: Job, recorded: Files | None) -> tuple[str, dict[str, str]]:
        found = paths(job, recorded)
        if job.id not in run_over:
            return found
        return found[0], paths(with_own_run(job), recorded)[1]

    return own


def point_paths(reads: Reads, layout: Layout, rows: Sequence[dict[str, Any]]) -> None:
    """Each sweep row's (sweep_table.table's) `job_dir` and `log_files` as `ls --json` gives
    its job's (stored_views: the same own_paths); None for a point no job in the queue
    ran (a folder's markers said its state: where its logs were is no longer known)."""
    jobs = reads.get_jobs([row["job_id"] for row in rows if row["job_id"] is not None])
    ran = list(jobs.values())
    recorded, paths = reads.latest_attempt_files(ran), own_paths(reads, layout, ran)
    for row in rows:
        job = jobs.get(row["job_id"]) if row["job_id"] is not None else None
        found = paths(job, recorded.get(job.id)) if job is not None else (None, None)
        row["job_dir"], row["log_files"] = found


def worded(
    views: Sequence[dict[str, Any]],
    jobs: Sequence[Job],
    explain: Callable[[Job], str | None],
    start: int = 0,
    stop: int | None = None,
) -> None:
    """Each view's `reason` (of views[start:stop]): service_reasons.explainer's."""
    for view, job in zip(views[start:stop], jobs[start:stop], strict=True):
        view["reason"] = explain(job)


def peaks_of(live: Mapping[int, Any]) -> dict[int, int]:
    """The running jobs' peak memory (engine.live), those that have one: job_view's."""
    return {job_id: run.peak for job_id, run in live.items() if run.peak}
