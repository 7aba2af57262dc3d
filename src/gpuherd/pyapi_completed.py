"""Jobs as they end: `herd.as_completed(jobs)` and `gpuherd.as_completed(jobs)`, as
`concurrent.futures.as_completed` yields futures.

    for job in herd.as_completed(train.sweep(lr=[1e-3, 1e-4]).jobs()):
        print(job.id, job.result())

One long poll at a time, never a tight loop: `POST /jobs/wait` with `"any": true` answers as
soon as one of the jobs not yielded yet has ended (the daemon's wait wakes on each job's end,
so an end is yielded within milliseconds), and is then asked again for the others.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from gpuherd.errors import DaemonError, InvalidValue, NotFound, NotRunning, Suspended
from gpuherd.pyapi_checks import (
    deadline_after,
    job_number,
    refuse_other_daemon,
    still_unfinished,
)
from gpuherd.pyapi_notebook import wait_interrupted
from gpuherd.pyapi_stuck import warn_stuck
from gpuherd.pyapi_sweep import Sweep
from gpuherd.pyapi_types import WrongType, WrongValue
from gpuherd.wait_removed import WAIT_OVER

if TYPE_CHECKING:
    from gpuherd.client import Client
    from gpuherd.pyapi import Herd, Job

LONG_POLL = 30.0
"""Longest single wait the daemon is asked for (client.WAIT_POLL's); then it is asked again."""
TURN_IDS = 1_000
"""Ids one wait asks about; more are asked about in turns. Each end makes a new wait, and a
wait naming every job left made the whole iteration's cost grow with the square of the jobs:
500 jobs, 455 waits and 536 KB; a wait of 1,500 ids costs the daemon ~7 ms, so 10,000 jobs
would have cost it minutes. In turns of 1,000 (under wire_requests.WAIT_MOST_IDS), an end
among the others is seen at their turn, within a few TURN_POLLs."""
TURN_POLL = 0.5
"""The wait of one turn when more than TURN_IDS jobs are left, and between the polls of a
daemon older than `any` (its wait answers only once all have ended)."""
_TAKES = "jobs: handles, ids, a JobList or a Sweep (herd.as_completed([7, 8]))"


class CompletedJobs:
    """Part of `Herd`: `as_completed`."""

    client: Client

    def as_completed(self, jobs: Any, timeout: float | None = None) -> Iterator[Job]:
        """Each job's handle as the job ends (succeeded, failed, killed, cancelled or lost), in
        the order they end; those ended already first. `jobs`: handles, ids, a JobList, or a
        Sweep (its points' jobs); each yielded once. TimeoutError, saying how many are still
        unfinished, `timeout` seconds after this call; Ctrl-C a KeyboardInterrupt that says
        the jobs go on (pyapi_notebook.wait_interrupted)."""
        herd = cast("Herd", self)  # (only Herd takes this part)
        return _as_completed(herd, *_handles(jobs, herd), timeout)


def as_completed(jobs: Any, timeout: float | None = None) -> Iterator[Job]:
    """`herd.as_completed(jobs, timeout)` for job handles (a JobList, a Sweep), of the daemon
    they come from: ids name no daemon, so `herd.as_completed` takes those."""
    handles, given = _handles(jobs, None)
    if not handles:
        return iter(())
    return _as_completed(next(iter(handles.values())).herd, handles, given, timeout)


def _as_completed(
    herd: Herd, handles: dict[int, Job], given: set[int], timeout: float | None
) -> Iterator[Job]:
    deadline = deadline_after(timeout)  # (checked now, and counted from now: the total)
    return _ended(herd, handles, given, deadline, timeout)


def _handles(jobs: Any, herd: Herd | None) -> tuple[dict[int, Job], set[int]]:
    """`jobs` as handles by id, in the order given, each once; ids too given `herd` (the
    module's as_completed has none: an id names no daemon); and the ids of those given as
    handles the daemon named (Job.seen). WrongType (a TypeError, shown in one line in a
    notebook) naming what is not a job, WrongValue (a ValueError) for a job of another
    daemon than `herd`'s (or than the first job's)."""
    from gpuherd.pyapi import Job

    if isinstance(jobs, Sweep):
        jobs = jobs.jobs()
    if isinstance(jobs, str | int | Job) or not isinstance(jobs, Iterable):
        raise WrongType(f"as_completed() takes a list of {_TAKES}; got {jobs!r}")
    handles: dict[int, Job] = {}
    given: set[int] = set()
    daemon = herd
    for job in jobs:
        if isinstance(job, Job):
            if job.seen:
                given.add(job.id)
            daemon = daemon or job.herd
            refuse_other_daemon(job, daemon, "as_completed()")
        elif herd is None:
            raise WrongType(
                f"gpuherd.as_completed() takes job handles (herd.submit's, herd.jobs()): "
                f"{job!r} is not one; for ids, herd.as_completed([7, 8]) names the daemon"
            )
        else:
            try:
                job = herd.job(job_number(job))
            except (WrongType, WrongValue):
                kind = type(job).__name__
                said = f"as_completed() takes {_TAKES}: {job!r} ({kind}) is not one"
                # Text not an id is no job (a name, 'lr'), as it always was; -3 a wrong id.
                number = isinstance(job, int) and not isinstance(job, bool)
                raise (WrongValue if number else WrongType)(said) from None
        handles.setdefault(job.id, job)
    return handles, given


def _ended(
    herd: Herd,
    handles: dict[int, Job],
    given: set[int],
    deadline: float | None,
    timeout: float | None,
) -> Iterator[Job]:
    waiting = dict(handles)
    # A handle the daemon named (submit's, jobs()', a sweep's) is of a job that existed: one
    # it no longer knows was removed since, even before the first poll, and is yielded as
    # such. An id given, or herd.job(ID)'s handle, is known only once the daemon answers
    # about it: a typo is refused.
    polls = _Polls(herd.client, known=set(given))
    try:  # (at the first next(): where the waiting begins)
        warn_stuck(herd.client, list(waiting))
    except KeyboardInterrupt:
        raise wait_interrupted(sorted(waiting)) from None
    while waiting:
        try:
            states = polls.next_states(list(waiting), deadline)
        except KeyboardInterrupt:  # (the socket read it came in says nothing of the jobs)
            raise wait_interrupted(sorted(waiting)) from None
        except NotFound as exc:
            # A daemon from before `removed` (wait_removed.py) refuses a job removed (`gpuherd
            # rm`) between two polls, or before the first: ended all the same, and the others
            # still come; the refusal ended the whole iteration. (An id that never was is
            # refused as the handles are looked up.)
            removed = polls.removed(exc)
            if removed is None or removed not in waiting:
                raise
            yield waiting.pop(removed)
            continue
        ended = [i for i in waiting if states.get(i) in WAIT_OVER]  # (removed: over too)
        # Past the deadline, the poll answered at once: what ended by then is yielded first.
        if not ended and deadline is not None and time.monotonic() >= deadline:
            raise still_unfinished(timeout or 0, waiting, len(handles))
        for job_id in ended:
            yield waiting.pop(job_id)


class _Polls:
    """The waits of one as_completed: each answers the states of the jobs it asked about,
    once one of them has ended (or its time is up)."""

    def __init__(self, client: Client, known: set[int]) -> None:
        self.client = client
        self.any_refused = False  # a daemon older than `any`: its wait is polled instead
        self.turn = 0
        self.answered = False
        self.known = known  # the jobs known to have existed: given, or answered about

    def next_states(self, ids: list[int], deadline: float | None) -> dict[int, str]:
        while True:
            try:
                states = self._wait(ids, deadline)
                self.answered = True
                self.known.update(states)
                return states
            except DaemonError as exc:
                # Gone midway (a restart to upgrade): the next daemon gets the grace a wait
                # gives it. Not one that never answered, nor one stopped (it answers nothing).
                never_answered = not self.answered and isinstance(exc, NotRunning)
                if isinstance(exc, Suspended) or never_answered:
                    raise
                self.client.back_or_gone(exc, deadline, None)  # (none back: as a wait says)

    def removed(self, refusal: NotFound) -> int | None:
        """The job a wait's NotFound (`no job 7: ...`, the first unknown id it was asked
        about) names, if it was known to exist (its handle given, or answered about before):
        one removed since."""
        named = re.match(r"no job (\d+)\b", str(refusal))
        job_id = int(named[1]) if named else None
        return job_id if job_id in self.known else None

    def _wait(self, ids: list[int], deadline: float | None) -> dict[int, str]:
        seconds = LONG_POLL if deadline is None else max(0.0, deadline - time.monotonic())
        if len(ids) > TURN_IDS:  # in turns, each a short wait: an end among the others counts
            start = self.turn % len(ids)
            self.turn += TURN_IDS
            ids, seconds = (ids[start:] + ids[:start])[:TURN_IDS], min(seconds, TURN_POLL)
        if not self.any_refused:
            body = {"ids": ids, "timeout": min(seconds, LONG_POLL), "any": True}
            try:
                answer = self.client.post("/jobs/wait", body)
                return {int(k): str(v) for k, v in answer["states"].items()}
            except InvalidValue as exc:
                if "any: unknown field" not in str(exc):
                    raise
                self.any_refused = True
        # A daemon from before `any` (or before the POST) answers only once every job has
        # ended: asked with a short wait, again and again, an end is yielded within TURN_POLL.
        states, _ = self.client.wait(ids, time.monotonic() + min(seconds, TURN_POLL))
        return states
