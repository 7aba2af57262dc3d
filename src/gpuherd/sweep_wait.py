"""A sweep's wait that goes on when a job it waits for is removed meanwhile (`gpuherd rm`,
`clean`): the one loop of `gpuherd sweep wait NAME` (`wait --sweep NAME`) and of Python's
`Sweep.wait()`.

Both read the sweep's points, then ask the daemon to wait for their jobs. A job removed in
between, or while the wait goes on (it asks again every 30 s, and after a daemon's restart),
made the daemon answer `no job 7`, and the wait failed with that line, where a point whose job
was removed before the wait began is judged by its folder's marker (core/sweep_verdict.py).
Now the points are read again, and the wait goes on for their jobs: the point of the removed
job has none (or an earlier one), and is judged so."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuherd.errors import NotFound

if TYPE_CHECKING:
    from gpuherd.client import Client
    from gpuherd.client_wait import Waited


def waited_despite_removals(
    client: Client,
    ids: Sequence[int],
    again: Callable[[], Sequence[int]],
    deadline: float | None = None,
    on_gone: Callable[[], None] | None = None,
    answered: bool = False,
) -> Waited:
    """`client.wait_for(ids, deadline, on_gone, answered)`; when the daemon knows a job of
    `ids` no longer, the jobs `again()` reads afresh are waited for instead. Each pass needs
    a job of the last read removed since (the fresh read lists none such), so the loop ends;
    a NotFound while every job of `ids` is read again (not a removal) is raised."""
    while True:
        try:
            return client.wait_for(ids, deadline, on_gone, answered=answered)
        except NotFound:
            fresh = list(again())
            if set(ids) <= set(fresh):
                raise
            ids = fresh
