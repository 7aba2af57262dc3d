"""The long poll behind `GET` and `POST /jobs/wait`: answer once every named job has
finished (with the POST's `any`, once one has: `as_completed`), or when the timeout runs
out. api/jobs.py declares both routes (before `/jobs/{job_id}` and `/jobs/{action}`, which
would take "wait" for an id or an action)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from gpuherd.broadcast import GAP
from gpuherd.core.states import BAD_END_STATES, FINISHED_STATES, JobState
from gpuherd.errors import DaemonError, InvalidValue
from gpuherd.service import Service
from gpuherd.wire_requests import WAIT_LONGEST, WAIT_MOST_IDS


async def waited(
    service: Service, ids: Sequence[int], timeout: float, any_finished: bool = False
) -> dict[str, Any]:
    """`done` (all finished), each job's `states`, and `endings`: how each job that ended but
    did not succeed ended (`failed (exit 7)`), read once, when the answer is made. With
    `any_finished`, the answer comes as soon as one of the jobs has finished."""
    _check(ids, timeout)
    changes = service.engine.changes.subscribe()
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # Read the jobs once; then follow the changes themselves, keeping the set of jobs
        # not finished yet (re-reading, or re-checking every job, on every change made a
        # wait for N jobs cost N^2).
        states: dict[int, JobState] = {}
        left_to_finish: set[int] = set()

        def read() -> None:
            states.update(service.job_states(ids))
            left_to_finish.clear()
            left_to_finish.update(i for i, s in states.items() if s not in FINISHED_STATES)

        read()

        def follow(change: dict[str, Any] | None) -> None:
            if change is None:  # the daemon is stopping: answer if the jobs ended by now
                read()
                if left_to_finish:
                    raise DaemonError("the daemon is stopping; wait again once it is back")
                return
            if change is GAP:  # changes were dropped: read the jobs again
                read()
                return
            job_id = change.get("id")
            if job_id in states and "state" in change:
                states[job_id] = state = JobState(change["state"])
                if state in FINISHED_STATES:
                    left_to_finish.discard(job_id)
                else:
                    left_to_finish.add(job_id)

        while True:
            while not changes.empty():  # a burst of changes: no timer for each
                follow(changes.get_nowait())
            left = deadline - loop.time()
            one_finished = any_finished and len(left_to_finish) < len(states)
            if not left_to_finish or one_finished or left <= 0:
                return _answer(service, states, done=not left_to_finish)
            with contextlib.suppress(TimeoutError):
                follow(await asyncio.wait_for(changes.get(), left))
    finally:
        service.engine.changes.unsubscribe(changes)


def _check(ids: Sequence[int], timeout: float) -> None:
    """What a request may hold that its types do not refuse, in one wording for the GET's
    query and the POST's body (a GET's query holds an id at least)."""
    if not 0 <= timeout <= WAIT_LONGEST:
        raise InvalidValue(
            f"timeout must be between 0 and {WAIT_LONGEST:g} seconds, got {timeout:g}"
        )
    if not ids:
        raise InvalidValue("ids is empty: name the jobs to wait for")
    if len(ids) > WAIT_MOST_IDS:
        raise InvalidValue(
            f"{len(ids):,} ids: a wait takes at most {WAIT_MOST_IDS:,}; send them in pieces"
        )


def _answer(service: Service, states: dict[int, JobState], done: bool) -> dict[str, Any]:
    bad = [i for i, s in states.items() if s in BAD_END_STATES]
    endings = {str(i): view for i, view in service.endings(bad).items()}
    states_out = {str(i): s.value for i, s in states.items()}
    return {"done": done, "states": states_out, "endings": endings}
