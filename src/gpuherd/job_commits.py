"""The git commit each submitted job comes from (`<sha>`, `<sha>+dirty` or `<sha>+unknown`:
git_commit.py), as a sweep's points record it: looked up once per submission and working
directory (a batch of 10,000 jobs from one folder runs git once), on a thread of its own, with
the submitter's PATH; submissions from one folder in flight together, or within a second of
the last answer, share one lookup (git_lookups.py).

In a small repository git answers in a few milliseconds, before the jobs are stored. In a
large one `git status` takes longer (~0.1 s for 50,000 tracked files): past GIT_WAIT the
submission is answered without waiting, and the commit is filled in when git answers (a job
that started meanwhile gets it in its job.json as it ends, if git answered by then; `show`
and `ls` have it). A daemon that stops first kills that git (git_lookups.py) and leaves the
jobs noted in herd.db (pending_commits.py): the next one looks their folder's commit up again
as it starts (`look_again`), and says so in daemon.log. A folder outside a work tree, or no
git on the PATH: nothing is recorded, and nothing said.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

from gpuherd import pending_commits
from gpuherd.core.idspec import format_ids
from gpuherd.git_lookups import LOOKUPS, GitLookups, Where

if TYPE_CHECKING:
    from gpuherd.store import Store
    from gpuherd.wire import SubmitItem

log = logging.getLogger("gpuherd.daemon")

GIT_WAIT = 0.1
"""Seconds a submission waits for git before it is answered without the commit."""

Found = dict[Where, str | None]
Fill = Callable[["Store", Sequence[int]], None]
"""Given the store and the ids the items were stored as, fill their commits once known."""


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


def _filling(waiter: asyncio.Future[Found], wheres: list[Where], asking: list[int]) -> Fill:
    def fill(store: Store, ids: Sequence[int]) -> None:
        jobs = list(zip(wheres, [ids[i] for i in asking], strict=True))
        with contextlib.suppress(sqlite3.Error):  # (the jobs are stored: the answer stands)
            pending_commits.note(store, jobs)  # (until git answers: a stop leaves them noted)
        _fill_when_answered(waiter, store, jobs)

    return fill


def look_again(store: Store, lookups: GitLookups = LOOKUPS) -> None:
    """At a daemon's start, on its loop: look up again the commits the last daemon stopped
    (or crashed) before git gave, and fill them in when git answers."""
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
    _fill_when_answered(_on_loop(lookups.commits(places)), store, jobs)


def _fill_when_answered(
    waiter: asyncio.Future[Found], store: Store, jobs: list[tuple[Where, int]]
) -> None:
    def answered(task: asyncio.Future[Found]) -> None:
        if task.cancelled() or task.exception() is not None:
            return  # (no commit: nothing to fill)
        found = task.result()
        commits = [(git, job_id) for place, job_id in jobs if (git := found[place]) is not None]
        # (a daemon stopping meanwhile: its store is closed; the next start looks again)
        with contextlib.suppress(sqlite3.Error), store.transaction():
            if commits:
                store.fill_git(commits)
            pending_commits.drop(store, (job_id for _, job_id in jobs))

    waiter.add_done_callback(answered)
