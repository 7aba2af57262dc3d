"""A sweep's wait that goes on when a job it waits for is removed meanwhile (`gpuherd rm`,
`clean`): the one loop of `gpuherd sweep wait NAME` (`wait --sweep NAME`) and of Python's
`Sweep.wait()`.

Both read the sweep's points, then ask the daemon to wait for their jobs. A job removed in
between, or while the wait goes on, is answered `removed` (wait_removed.py); a daemon from
before that refuses it (`no job 7`: it is asked again every 30 s, and after a restart). Either
way, the points are read again, and the wait goes on for their jobs: the point of the removed
job has none (or an earlier one), and is judged so, by its folder (core/sweep_verdict.py), as a
point whose job was removed before the wait began."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuherd.errors import NotFound
from gpuherd.wait_removed import REMOVED

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
    """`client.wait_for(ids, deadline, on_gone, answered)`; when a job of `ids` was removed
    (answered `removed`, or refused by an older daemon), the jobs `again()` reads afresh are
    waited for instead, so the answer names no removed job. Each pass needs a job of the last
    read removed since (a fresh read lists none such), so the loop ends; a NotFound while
    every job of `ids` is read again (not a removal) is raised."""
    while True:
        try:
            waited = client.wait_for(ids, deadline, on_gone, answered=answered)
        except NotFound:
            fresh = list(again())
            if set(ids) <= set(fresh):
                raise
        else:
            removed = {i for i, state in waited.states.items() if state == REMOVED}
            if not removed:
                return waited
            fresh = [i for i in again() if i not in removed]
        ids = fresh
