"""`gpuherd run`'s jobs read before git gave their folder's commit get it once git answers, as
a daemon's do (job_commits.py): in the run's database, for the jobs yet to end, whose job.json
is written as they end, and into the job.json of those that ended. The run's first job waits
GIT_WAIT for it at most, and the rest are not held (runner_input.py); before, a run in a
repository whose `git status` takes longer (~50,000 tracked files) recorded no commit for
any job it read at once: a whole input file's."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

from gpuherd.job_commits import into_ended_jobs_files

if TYPE_CHECKING:
    from gpuherd.engine import Engine
    from gpuherd.wire import SubmitItem

Lookup = Future[str | None]
"""The commit of the run's folder, looked up on git's thread (runner_input.CommandItems)."""


class LateCommits:
    """The jobs of a run stored without a commit while its lookup (`lookup`: None, none was
    made) had yet to answer; given it when it does, on the run's loop."""

    def __init__(self, engine: Engine, lookup: Lookup | None) -> None:
        self._engine, self._lookup = engine, lookup
        self._waiting: list[int] = []
        self._watched = False

    def submitted(self, ids: Sequence[int], items: Sequence[SubmitItem]) -> None:
        """Jobs just stored (on the run's loop): those without a commit wait for git's."""
        lookup = self._lookup
        if lookup is None:
            return
        self._waiting += [
            job_id for job_id, item in zip(ids, items, strict=True) if item.git is None
        ]
        if self._waiting and not self._watched:
            self._watched = True
            loop = asyncio.get_running_loop()
            lookup.add_done_callback(lambda _: _on(loop, self._fill))  # (on git's thread)

    async def settled(self) -> None:
        """At the run's end: git's answer waited for while jobs wait for it (git's own
        timeouts bound it: git_commit.GIT_TIMEOUT a call), and given them. Killed with the
        run, git left every job read before it answered `git: null` (a run of quick jobs)."""
        if self._lookup is None or not self._waiting:
            return
        with contextlib.suppress(Exception):  # (a failed lookup: nothing to give)
            await asyncio.wrap_future(self._lookup)
        self._fill()  # (now: the callback's call may come after the run's loop is gone)

    def _fill(self) -> None:
        lookup, ids, self._waiting = self._lookup, self._waiting, []
        self._watched = False
        if lookup is None or lookup.cancelled() or lookup.exception() is not None:
            return
        commit = lookup.result()
        if commit is None or not ids:  # (no work tree there: nothing to record)
            return
        store = self._engine.store
        try:
            store.fill_git([(commit, job_id) for job_id in ids])
        except sqlite3.Error:  # (the run's database closed: it ended meanwhile)
            return
        into_ended_jobs_files(self._engine, dict.fromkeys(ids, commit))


def _on(loop: asyncio.AbstractEventLoop, call: Callable[[], None]) -> None:
    with contextlib.suppress(RuntimeError):  # (the run is over: its loop closed)
        loop.call_soon_threadsafe(call)
