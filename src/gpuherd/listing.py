"""What `ls` and `ls -q` list (Service.ls, Service.ls_ids). `ls`'s in two parts: what the
database says, read through any store (the engine's, or a reader's on its own thread:
store_reader.py), and why each job waits, which only the engine knows, worded on its loop
afterwards (service_reasons.py). `ls -q`'s is the first part alone. What a listing asks
for is one ListingQuery, made where the request is read and passed down as it is.

Only the first part touches no engine state: it may run off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuherd.core.model import Job
from gpuherd.core.recovery import unwatched_run
from gpuherd.core.run_time import pauses, ran_for
from gpuherd.core.states import (
    FINISHED_STATES,
    LIVE_STATES,
    WAITING_STATES,
    JobState,
    split_waiting,
)
from gpuherd.errors import InvalidValue
from gpuherd.store import Store
from gpuherd.store_reader import ReadOnlyStore
from gpuherd.store_rows import ANY_JOB, JobFilter
from gpuherd.wire import job_view

Reads = Store | ReadOnlyStore

RECENT_FINISHED = 10
"""How many finished jobs a plain `ls` shows after the active ones."""


@dataclass(frozen=True)
class ListingQuery:
    """What a listing asks for (`GET /jobs`, the dashboard's): made once where the request is
    read, its state names checked there (states_named), and passed down as it is."""

    states: tuple[JobState, ...] = ()
    """Only jobs in these states (none: as `all_jobs` says)."""
    match: JobFilter = ANY_JOB
    all_jobs: bool = False
    """Every job; else, without `states`, a plain `ls`: the active ones and the most recent
    finished ones."""
    limit: int | None = None
    newest_first: bool = False
    """`last`: the jobs by id, the newest first, whatever their state."""


PLAIN_LS = ListingQuery()
"""`gpuherd ls` as it is: the active jobs and the most recent finished ones."""
LIVE_JOBS = ListingQuery(tuple(LIVE_STATES), all_jobs=True)
"""The jobs running or paused: the dashboard's GPUs' and overview's."""


def states_named(names: Sequence[str]) -> tuple[JobState, ...]:
    """The states named (`?state=held`), or InvalidValue naming the first unknown one."""
    states = []
    for name in names:
        try:
            states.append(JobState(name))
        except ValueError:
            known = ", ".join(s.value for s in JobState)
            raise InvalidValue(f"unknown state '{name}': use one of {known}") from None
    return tuple(states)


def listed(reads: Reads, query: ListingQuery) -> tuple[list[Job], int]:
    """The jobs `ls` lists and how many more match but were left out by `query.limit`
    (Service.ls says which)."""
    wanted, match, limit = query.states, query.match, query.limit
    limited: tuple[JobState, ...] = wanted
    if query.newest_first:  # `last`: the job submitted last, whatever its state
        jobs = reads.list_jobs(wanted, match, limit, newest_first=True)
        shown = len(jobs)
    elif wanted or query.all_jobs:
        started, waiting_states = split_waiting(wanted or tuple(JobState))
        jobs = reads.list_jobs(started, match, limit) if started else []
        left = None if limit is None else limit - len(jobs)
        if waiting_states and left != 0:
            jobs += reads.waiting_in_order(match, left, waiting_states)
        shown = len(jobs)
    else:
        limited = tuple(WAITING_STATES)
        waiting = reads.waiting_in_order(match, limit)
        recent = reads.list_jobs(tuple(FINISHED_STATES), match, RECENT_FINISHED, newest_first=True)
        live = reads.list_jobs(tuple(LIVE_STATES), match)
        jobs = sorted(recent + live, key=lambda j: j.id) + waiting
        shown = len(waiting)
    more = 0 if limit is None or shown < limit else reads.count_jobs(limited, match)
    return jobs, max(0, more - shown)


def listed_ids(reads: Reads, query: ListingQuery) -> list[int]:
    """The ids `ls -q` lists (Service.ls_ids says which), in the order `ls` lists them."""
    wanted, match, limit = query.states, query.match, query.limit
    if query.newest_first:  # as `ls` lists them then: the jobs of `wanted` (or any), by id
        return reads.list_job_ids(wanted, match, limit, newest_first=True)
    narrowed = bool(wanted or query.all_jobs)
    if not narrowed:
        wanted = tuple(s for s in JobState if s not in FINISHED_STATES)
    started, waiting_states = split_waiting(wanted or tuple(JobState))
    ids: list[int] = []
    if started:  # without `wanted`, the running jobs are all listed, as `ls` lists them
        ids = reads.list_job_ids(started, match, limit if narrowed else None)
    left = limit - len(ids) if narrowed and limit is not None else limit
    if waiting_states and left != 0:
        ids += reads.waiting_ids(match, waiting_states, left)
    return ids


def stored_views(
    reads: Reads, jobs: Sequence[Job], now: float, peaks: Mapping[int, int]
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The jobs' views (wire.job_view) without their reasons, and the listed held jobs'
    latest hold details (what their reasons say), from `reads` alone: `now` and the
    running jobs' peak memory (`peaks`) are read from the engine beforehand."""
    held = [j.id for j in jobs if j.state is JobState.HELD and j.release_at is None]
    holds = reads.hold_details(held)
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
        views.append(view)
    return views, holds


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
