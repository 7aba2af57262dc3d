"""The dashboard's jobs page: one page of the jobs a filter matches (views.JobFilter), read
through Service.page_jobs."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from gpuherd.api.buttons import retry_failed_question
from gpuherd.api.views import PAGE_SIZE, JobFilter
from gpuherd.api.views_projects import project_error
from gpuherd.cli.plain import show_bidi
from gpuherd.core.int64 import LARGEST
from gpuherd.core.states import JobState
from gpuherd.damaged_rows import unlisted
from gpuherd.errors import HerdError
from gpuherd.service import Service
from gpuherd.sweep_specs import expand_points, stored_spec


@dataclass
class JobPage:
    jobs: list[dict[str, Any]]
    filter: JobFilter
    total: int
    """Jobs matching the filter."""
    size: int = PAGE_SIZE
    window_error: str | None = None
    """Why the filter's `since` was ignored (JobFilter.since_moment)."""
    unreadable: str | None = None
    """The jobs of the page left out as their rows cannot be read (damaged_rows.unlisted)."""
    left_out: int = 0
    """How many: `total` counts them (COUNT reads no row), so the page covers them too."""
    failed: int = 0
    """The failed jobs *Retry all failed* retries: those of the filter, on every page (its
    states aside), or every failed job (dashboard_actions.retry_failed); an older run of a
    sweep point run again since left out, as `retry` refuses it."""
    older: int = 0
    """The failed jobs of the filter left out so: its question says so (it asked about 856
    jobs of a sweep submitted twice, retried 428 and refused 428, one line each)."""
    project_error: str | None = None
    """Why a `?project=` no job has lists nothing (views_projects.project_error)."""

    @property
    def first(self) -> int:
        return (self.filter.page - 1) * self.size + 1

    @property
    def covered(self) -> int:
        """The page's place in the list, its jobs left out included: a page of 10 jobs with
        one left out said `1–9 of 10` and offered a next page, which was empty."""
        return min(len(self.jobs) + self.left_out, max(0, self.total - self.first + 1))

    @property
    def has_next(self) -> bool:
        return self.first - 1 + self.covered < self.total

    @property
    def last_page(self) -> int:
        return max(1, -(-self.total // self.size))

    def shown_name(self, job: dict[str, Any]) -> str:
        """A job's name as its row shows it: on a page of one sweep, without the sweep's,
        which they all begin with (`lr=0.1,seed=7`, not `lr-grid/lr=0.1,s…`)."""
        name: str = job.get("name") or ""
        sweep = self.filter.sweep
        return name[len(sweep) + 1 :] if sweep and name.startswith(sweep + "/") else name

    @property
    def name_budget(self) -> int:
        """The Name column's room from 1200 px (jobs_columns.css, `names-N`: N characters),
        the page's longest name rounded up to 4, at most NAME_BUDGET: a sweep's long names
        take the room that empty columns (GPUs, Info) and short names leave."""
        longest = max((len(show_bidi(self.shown_name(job))) for job in self.jobs), default=0)
        return min(NAME_BUDGET, -(-longest // 4) * 4)

    @property
    def scoped(self) -> bool:
        """Whether *Retry all failed* keeps to the page's filter (its states aside)."""
        return bool(self.filter.query(states=(), page=1))

    @property
    def retry_question(self) -> str:
        """What *Retry all failed* asks: `Retry all 26 failed jobs?`."""
        return retry_failed_question(self.failed, self.scoped, self.older)

    @property
    def has_priority(self) -> bool:
        """Whether a row has a priority other than 0: then the table has a Prio column, as
        `gpuherd ls` has PRIO (without one, *prio +* changed nothing a row showed). A page of
        priorities 0 alone keeps its room for names and reasons."""
        return any(job.get("priority") for job in self.jobs)

    @property
    def has_info(self) -> bool:
        """Whether a row has a reason in its Info column (else the column is kept narrow)."""
        return any(job.get("reason") for job in self.jobs)


NAME_BUDGET = 48
"""The most characters the Name column keeps room for; longer names end in "…"."""


FAILED_ONLY = (JobState.FAILED.value,)


Where = tuple[str | None, str, str | None]
"""A filter's project, text and sweep, as Service.page_jobs takes them."""


@lru_cache(maxsize=8)
def _points_latest(service: Service, sweep: str, mark: str) -> tuple[int, ...] | None:
    """The latest job of each point of the sweep's grid, as `gpuherd sweep status` counts
    the points (and `-q` prints them): a point's newest job, of a point of the latest
    submission (runs of points an earlier, wider grid had are not counted there). None for no
    sweep of that name (a removed sweep's jobs kept: the newest of each folder, JobFilter's
    `latest`). Read again once a change is published (`mark`): a submission makes new ones."""
    row = service.store.get_sweep(sweep)
    if row is None:
        return None
    try:
        points = expand_points(stored_spec(row))
    except HerdError:  # a stored spec no longer valid: the newest job of each folder
        return None
    newest = service.store.newest_runs(sweep)
    return tuple(sorted(newest[p.run_dir] for p in points if p.run_dir in newest))


def latest_ids(service: Service, f: JobFilter) -> tuple[int, ...] | None:
    """The jobs `?latest=1&sweep=NAME` keeps (_points_latest); None: no list of ids (the
    filter's `latest` alone, if set, keeps the newest job of each sweep point's folder)."""
    if not (f.latest and f.sweep):
        return None
    return _points_latest(service, f.sweep, service.engine.changes.mark)


@lru_cache(maxsize=64)
def _failed(
    service: Service, mark: str, where: Where, since: float | None, latest: bool, points: bool
) -> int:
    """How many failed jobs the filter has (`latest`: older runs of sweep points run again
    since left out; `points`: the sweep's points' latest jobs alone, ?latest=1), counted as
    *Retry all failed* finds them (a COUNT): its question says how many it retries and how
    many it leaves out (`retry` refuses those: the point's folder is its newer job's), and
    the table's live refresh keeps them current (_jobs.html holds the button). Counted again
    only once a change is published (`mark`): the refresh every 10 s of a quiet queue ran the
    COUNT each time, over every job of a search or a sweep. (A relative time window is a new
    `since` at each look: counted anew.)"""
    ids = _points_latest(service, where[2], mark) if points and where[2] else None
    return service.page_jobs(FAILED_ONLY, *where, 0, 0, since, latest, ids)[0]


def jobs_page(service: Service, f: JobFilter, size: int = PAGE_SIZE) -> JobPage:
    """One page of jobs, newest first (or in start order: JobFilter.start_order), through
    Service.page_jobs (COUNT, LIMIT and OFFSET in SQL): only the page's jobs are read and
    turned into views (with their why-not reason)."""
    since, unread = f.since_moment(time.time())
    window_error = f"{unread}; showing jobs of any time" if unread else None
    if unread:  # ignored: not shown as a filter in force, nor sent as one (its buttons)
        f = replace(f, since="")
    where = (f.project or None, f.text, f.sweep or None)
    mark = service.engine.changes.mark  # (before the reads: a change meanwhile moves it)
    ids = latest_ids(service, f)
    with service.store.passing_over_damaged() as damaged:
        # (A page past any there can be, `page=99999999999999999999999`, read from the
        # largest offset SQLite takes: the page it names is the one asked for, not a cap's.)
        offset = min((f.page - 1) * size, LARGEST)
        total, jobs = service.page_jobs(f.states, *where, offset, size, since, f.latest, ids)
    said = unlisted(sorted(damaged.items()))
    # A page of failed jobs alone: its total is one of the numbers (no COUNT of its own).
    alone = f.states == FAILED_ONLY
    failed = total if alone and f.latest else _failed(service, mark, where, since, True, f.latest)
    if f.latest or alone:  # (?latest=1 lists no older run to leave out)
        every = failed if f.latest else total
    else:
        every = _failed(service, mark, where, since, False, False)
    older = max(0, every - failed)
    unknown = project_error(service.store, f.project, total)
    return JobPage(jobs, f, total, size, window_error, said, len(damaged), failed, older, unknown)
