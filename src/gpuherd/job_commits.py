"""The git commit each submitted job comes from (`<sha>`, `<sha>+dirty` or `<sha>+unknown`:
git_commit.py), as a sweep's points record it: looked up once per submission and working
directory (a batch of 10,000 jobs from one folder runs git once), on a thread of its own, with
the submitter's PATH; submissions from one folder in flight together, or within a second of
the last answer, share one lookup (git_lookups.py).

In a small repository git answers in a few milliseconds, before the jobs are stored. In a
large one `git status` takes longer (~0.1 s for 50,000 tracked files): past GIT_WAIT the
submission is answered without waiting, and the commit is filled in when git answers (a job
that started meanwhile gets it in its job.json as it ends, if git answered by then; one that
had ended gets it in its job.json then; `show` and `ls` have it). Such jobs are noted in
herd.db (pending_commits.py) in the transaction that stores them: a daemon that stops first
kills that git (git_lookups.py), or is killed, and the next one looks their folder's commit up
again as it starts (`look_again`), and says so in daemon.log. A folder outside a work tree, or no
git on the PATH: nothing is recorded, and nothing said.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING

from gpuherd import jobfiles, pending_commits
from gpuherd.core.idspec import format_ids
from gpuherd.core.states import FINISHED_STATES
from gpuherd.git_lookups import LOOKUPS, GitLookups, Where

if TYPE_CHECKING:
    from gpuherd.core.model import Job
    from gpuherd.engine import Engine
    from gpuherd.service import Service, Submitted
    from gpuherd.wire import SubmitItem

log = logging.getLogger("gpuherd.daemon")

GIT_WAIT = 0.1
"""Seconds a submission waits for git before it is answered without the commit."""

Found = dict[Where, str | None]
Fill = Callable[["Engine", Sequence[int]], None]
"""Given the engine and the ids the items were stored as, in the transaction that stores them:
note them, and fill their commits once known (submit)."""


def _where(item: SubmitItem) -> Where:
    return item.cwd, (item.env or {}).get("PATH")


def _on_loop(lookups: Mapping[Where, Future[str | None]]) -> asyncio.Future[Found]:
    """An asyncio future of the running loop, set once every lookup answered. Never set if
    the loop closed first, or the lookups stopped (a daemon stopping): nothing waits for it
    then, nothing is raised."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[Found] = loop.create_future()

    def settle() -> None:
        if not waiter.done() and all(f.done() for f in lookups.values()):
            waiter.set_result({place: f.result() for place, f in lookups.items()})

    def answered(_: Future[str | None]) -> None:  # (on the lookup's thread, or this one)
        with contextlib.suppress(RuntimeError):  # (the loop closed)
            loop.call_soon_threadsafe(settle)

    for lookup in lookups.values():
        lookup.add_done_callback(answered)
    return waiter


async def commit_of(place: Where, lookups: GitLookups = LOOKUPS) -> str | None:
    """The commit of `place`, waited for (a sweep's: its params.json files need it)."""
    return (await _on_loop({place: lookups.commit(place)}))[place]


async def note_commits(
    items: Sequence[SubmitItem], wait: float = GIT_WAIT, lookups: GitLookups = LOOKUPS
) -> Fill | None:
    """Set the `git` of each item that has none (a sweep's points have theirs) to the commit
    of its working directory. None when git answered within `wait` seconds; else a function
    to call with the ids the items were stored as, which fills their commits when git answers
    (a refused submission never calls it: its answer is dropped)."""
    asking = [i for i, item in enumerate(items) if item.git is None]
    if not asking:
        return None
    looking = lookups.commits(_where(items[i]) for i in asking)
    if all(lookup.done() for lookup in looking.values()):  # (one that came within a second)
        found = {place: lookup.result() for place, lookup in looking.items()}
    else:
        waiter = _on_loop(looking)
        done, _ = await asyncio.wait({waiter}, timeout=wait)
        if not done:
            return _filling(waiter, [_where(items[i]) for i in asking], asking)
        found = waiter.result()
    for i in asking:
        items[i].git = found[_where(items[i])]
    return None


def submit(service: Service, items: Sequence[SubmitItem], fill: Fill | None) -> Submitted:
    """service.submit_and_tell, and `fill` (note_commits) in the same transaction: the jobs
    and the note of those whose commit git has yet to give, both stored or neither (noted in
    a write of its own, a daemon killed between the two left jobs whose commit no daemon
    looked up again). The jobs' own transaction is durable: this costs no flush more."""
    with service.store.transaction(durable=True):
        submitted = service.submit_and_tell(items)
        if fill is not None:
            fill(service.engine, submitted.ids)
    return submitted


def _filling(waiter: asyncio.Future[Found], wheres: list[Where], asking: list[int]) -> Fill:
    def fill(engine: Engine, ids: Sequence[int]) -> None:
        jobs = list(zip(wheres, [ids[i] for i in asking], strict=True))
        pending_commits.note(engine.store, jobs)  # (until git answers: a stop leaves them noted)
        # (once committed: ids rolled back would be the next submission's)
        engine.store.after_commit(partial(_fill_when_answered, waiter, engine, jobs))

    return fill


def look_again(engine: Engine, lookups: GitLookups = LOOKUPS) -> None:
    """At a daemon's start, on its loop: look up again the commits the last daemon stopped
    (or crashed) before git gave, and fill them in when git answers."""
    store = engine.store
    noted = [(place, i) for place, ids in pending_commits.pending(store).items() for i in ids]
    known = store.known_ids([i for _, i in noted])
    if gone := [i for _, i in noted if i not in known]:  # (removed meanwhile: `rm`)
        pending_commits.drop(store, gone)
    jobs = [(place, i) for place, i in noted if i in known]
    if not jobs:
        return
    log.info(
        "job %s: the last daemon stopped before git gave the commit; looking it up again",
        format_ids(i for _, i in jobs),
    )
    places = {place for place, _ in jobs}
    _fill_when_answered(_on_loop(lookups.commits(places)), engine, jobs)


def _fill_when_answered(
    waiter: asyncio.Future[Found], engine: Engine, jobs: list[tuple[Where, int]]
) -> None:
    def answered(task: asyncio.Future[Found]) -> None:
        if task.cancelled() or task.exception() is not None:
            return  # (no commit: nothing to fill)
        found = task.result()
        commits = [(git, job_id) for place, job_id in jobs if (git := found[place]) is not None]
        store = engine.store
        try:
            with store.transaction():
                if commits:
                    store.fill_git(commits)
                pending_commits.drop(store, (job_id for _, job_id in jobs))
        except sqlite3.Error:  # (a daemon stopping meanwhile: its store is closed)
            return  # (the jobs stay noted: the next start looks again)
        into_ended_jobs_files(engine, dict((job_id, git) for git, job_id in commits))

    waiter.add_done_callback(answered)


def into_ended_jobs_files(engine: Engine, commits: dict[int, str]) -> None:
    """The commits of jobs that had ended when git answered, into the job.json their end
    wrote without one (a running job's gets it as it ends, a queued one's as it starts):
    written with the engine's paperwork, after that end's own writes, which may still wait
    for the tick's. A job removed meanwhile (`rm`) is skipped, as is a folder gone (`clean`)."""
    try:
        states = engine.store.states_of(list(commits))
        ended = engine.store.get_jobs([i for i, s in states.items() if s in FINISHED_STATES])
    except sqlite3.Error:  # (a disk that failed meanwhile: `show` has the commits)
        return
    for job in ended.values():
        if job.attempt:  # (not one cancelled before it ran: no folder)
            engine.add_paperwork(job.id, partial(_write_commit, engine, job, commits[job.id]))
    if ended:
        engine.wake()


def _write_commit(engine: Engine, job: Job, git: str) -> OSError | None:
    """Paperwork: never raises (it would fail the engine's tick); a failure is logged, not
    returned: the job's end is recorded, without its commit. A job whose end could not be
    recorded (`gpuherd run` says so: Engine.unwritten) stays so: its job.json is not that
    end's, and returning None would say it was written."""
    if engine.unwritten is not None and (left := engine.unwritten.get(job.id)) is not None:
        return left
    layout = engine.layout
    attempt_dir, job_dir = layout.attempt_dir(job, job.attempt), layout.job_dir(job)
    failed = jobfiles.record_commit(str(attempt_dir), str(job_dir), job.id, job.attempt, git)
    if failed is not None and not isinstance(failed, FileNotFoundError):  # (not its folder gone)
        log.warning(
            "job %d: its commit (git answered after it ended) could not be written to %s: %s",
            job.id,
            job_dir / "job.json",
            failed.strerror or failed,
        )
    return None
