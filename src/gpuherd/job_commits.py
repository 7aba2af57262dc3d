"""The git commit each submitted job comes from (`<sha>` or `<sha>+dirty`: git_commit.py), as a
sweep's points record it: looked up once per submission and working directory (a batch of
10,000 jobs from one folder runs git once), on a thread, with the submitter's PATH.

In a small repository git answers in a few milliseconds, before the jobs are stored. In a
large one `git status` takes longer (~0.1 s for 50,000 tracked files): past GIT_WAIT the
submission is answered without waiting, and the commit is filled in when git answers (a job
that started meanwhile has none in its job.json; `show` and `ls` have it). A folder outside a
work tree, or no git on the PATH: nothing is recorded, and nothing said.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from gpuherd.git_commit import git_commit

if TYPE_CHECKING:
    from gpuherd.store import Store
    from gpuherd.wire import SubmitItem

GIT_WAIT = 0.1
"""Seconds a submission waits for git before it is answered without the commit."""

Where = tuple[str, str | None]
"""A working directory and the submitter's PATH: what git is run with."""
Fill = Callable[["Store", Sequence[int]], None]
"""Given the store and the ids the items were stored as, fill their commits once known."""


def _where(item: SubmitItem) -> Where:
    return item.cwd, (item.env or {}).get("PATH")


def _look_up(places: Iterable[Where]) -> dict[Where, str | None]:
    return {place: git_commit(*place) for place in places}


async def note_commits(items: Sequence[SubmitItem], wait: float = GIT_WAIT) -> Fill | None:
    """Set the `git` of each item that has none (a sweep's points have theirs) to the commit
    of its working directory. None when git answered within `wait` seconds; else a function
    to call with the ids the items were stored as, which fills their commits when git answers
    (a refused submission never calls it: its answer is dropped)."""
    asking = [i for i, item in enumerate(items) if item.git is None]
    if not asking:
        return None
    places = {_where(items[i]) for i in asking}
    looking = asyncio.ensure_future(asyncio.to_thread(_look_up, places))
    done, _ = await asyncio.wait({looking}, timeout=wait)
    if done:
        found = looking.result()
        for i in asking:
            items[i].git = found[_where(items[i])]
        return None
    wheres = [_where(items[i]) for i in asking]

    def fill(store: Store, ids: Sequence[int]) -> None:
        stored = [ids[i] for i in asking]

        def answered(task: asyncio.Future[dict[Where, str | None]]) -> None:
            found = task.result()
            commits = [
                (git, job_id)
                for place, job_id in zip(wheres, stored, strict=True)
                if (git := found[place]) is not None
            ]
            if commits:  # (a daemon stopping meanwhile: its store is closed; nothing to fill)
                with contextlib.suppress(sqlite3.Error):
                    store.fill_git(commits)

        looking.add_done_callback(answered)

    return fill
