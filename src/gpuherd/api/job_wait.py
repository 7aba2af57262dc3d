"""The long poll behind `GET` and `POST /jobs/wait`: answer once every named job has
finished (with the POST's `any`, once one has: `as_completed`), or when the timeout runs
out. api/jobs.py declares both routes (before `/jobs/{job_id}` and `/jobs/{action}`, which
would take "wait" for an id or an action).

A job removed (`gpuherd rm`, `clean`) is answered `removed` (wait_removed.py), whether it
went during the poll (its `rm` change) or before the ask (an id that was given, which no job
has now): the client asks again every 30 s and after a restart, and its wait failed with
`no job 7` where the job went in between. An id never given to a job is refused, as before."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from gpuherd.broadcast import GAP
from gpuherd.core.states import BAD_END_STATES, FINISHED_STATES, JobState
from gpuherd.errors import DaemonError, InvalidValue
from gpuherd.service import Service
from gpuherd.service_jobs import no_job
from gpuherd.wait_removed import REMOVED, REMOVED_MESSAGE
from gpuherd.wire import outcome_view
from gpuherd.wire_requests import WAIT_LONGEST, WAIT_MOST_IDS


async def waited(
    service: Service, ids: Sequence[int], timeout: float, any_finished: bool = False
) -> dict[str, Any]:
    """`done` (all finished or removed), each job's `states` (`removed` for a job removed),
    and `endings`: how each job that ended but did not succeed ended (`failed (exit 7)`),
    read once, when the answer is made. With `any_finished`, the answer comes as soon as one
    of the jobs has finished (or was removed)."""
    _check(ids, timeout)
    changes = service.engine.changes.subscribe()
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        jobs = _Followed(service, ids)
        while True:
            while not changes.empty():  # a burst of changes: no timer for each
                jobs.follow(changes.get_nowait())
            left = deadline - loop.time()
            if not jobs.unfinished or (any_finished and jobs.over) or left <= 0:
                return jobs.answer(done=not jobs.unfinished)
            with contextlib.suppress(TimeoutError):
                jobs.follow(await asyncio.wait_for(changes.get(), left))
    finally:
        service.engine.changes.unsubscribe(changes)


class _Followed:
    """The jobs of one wait, read once, then followed by their changes themselves, keeping
    the set of jobs not finished yet (re-reading, or re-checking every job, on every change
    made a wait for N jobs cost N^2)."""

    def __init__(self, service: Service, ids: Sequence[int]) -> None:
        self.service, self.ids = service, ids
        self.states: dict[int, JobState] = {}
        self.removed: set[int] = set()
        self.unfinished: set[int] = set()
        self.read()

    @property
    def over(self) -> int:
        """How many of the jobs have finished, or were removed."""
        return len(self.states) + len(self.removed) - len(self.unfinished)

    def read(self) -> None:
        found, gone = _read(self.service, self.ids)
        self.states = found
        self.removed.update(gone)
        self.unfinished = {i for i, s in found.items() if s not in FINISHED_STATES}

    def follow(self, change: dict[str, Any] | None) -> None:
        if change is None:  # the daemon is stopping: answer if the jobs ended by now
            self.read()
            if self.unfinished:
                raise DaemonError("the daemon is stopping; wait again once it is back")
            return
        if change is GAP:  # changes were dropped: read the jobs again
            self.read()
            return
        job_id = change.get("id")
        if job_id not in self.states:
            return
        if change.get("event") == "rm":  # (a queued one's `cancelled` came just before)
            del self.states[job_id]
            self.removed.add(job_id)
            self.unfinished.discard(job_id)
        elif "state" in change:
            self.states[job_id] = state = JobState(change["state"])
            if state in FINISHED_STATES:
                self.unfinished.discard(job_id)
            else:
                self.unfinished.add(job_id)

    def answer(self, done: bool) -> dict[str, Any]:
        """Each job's state in the order asked (`removed` for a removed one), and `endings`
        of those that did not succeed (a removed one's says so, in the line a client prints
        of it)."""
        bad = [i for i, s in self.states.items() if s in BAD_END_STATES]
        endings = {str(i): view for i, view in self.service.endings(bad).items()}
        gone = {"state": REMOVED, **outcome_view(None), "message": REMOVED_MESSAGE}
        endings.update((str(i), gone) for i in self.removed)
        states = {
            str(i): REMOVED if i in self.removed else self.states[i].value
            for i in dict.fromkeys(self.ids)
        }
        return {"done": done, "states": states, "endings": endings}


def _read(service: Service, ids: Sequence[int]) -> tuple[dict[int, JobState], list[int]]:
    """The states of the jobs of `ids` there are, and those removed: ids once given to a job
    (up to the highest ever given) that no job has now. NotFound names the first id never
    given, in the order asked, as every verb names an id no job has."""
    found = service.store.states_of(list(dict.fromkeys(ids)))
    gone = [i for i in dict.fromkeys(ids) if i not in found]
    if gone:
        given = service.store.last_job_id()  # (the highest id ever given, removed or not)
        never = next((i for i in gone if not 0 < i <= given), None)
        if never is not None:  # (0 too, which no job has)
            raise no_job(never)
    return found, gone


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
