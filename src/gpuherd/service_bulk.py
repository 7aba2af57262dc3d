"""`kill` and `rm` of many jobs at once (service_jobs.py): the jobs no dependency ties to
another (Store.lone_states: a sweep's points, most often) are ended together, one statement
per table; the others one at a time, as before, each in a savepoint of its own.

A verb went a job at a time: each one read whole, its row written, its event added, the jobs
waiting for it looked for, its watchers told, the engine woken: `kill` of a sweep of 40,000
queued points took 2.6 s of the daemon's CPU, `rm` of them 4.1 s (up to 16 and 20 s on a
busy machine; benchmarks/sweep_scale.py), now 0.7 and 1.6 s. What each job ends as, what
watchers hear of it (in the same order for each job) and what the verb answers for it are
the same either way.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd.core.idspec import no_job_with
from gpuherd.core.states import LIVE_STATES, WAITING_STATES, Event, JobState, transition
from gpuherd.engine_held_runs import removal_refused
from gpuherd.errors import NotFound
from gpuherd.store_rows import JobFilter
from gpuherd.wire import ActionResult

if TYPE_CHECKING:
    from gpuherd.core.model import Job
    from gpuherd.engine import Engine
    from gpuherd.store import Store

KILLED = "cancelled by the user"
REMOVED = "removed by the user"
"""The outcome's message of a waiting job cancelled by a kill, by an rm."""

Bulk = Callable[[Mapping[int, JobState]], dict[int, str]]
"""Ends some of the lone jobs given (their states, by id): what the verb says of each."""


def in_bulk(
    store: Store,
    ids: Sequence[int],
    bulk: Bulk,
    each: Callable[[Sequence[int]], list[ActionResult]],
) -> list[ActionResult]:
    """The verb on `ids`: `bulk` on the lone jobs among them, `each` (JobVerbs._each) on the
    others, in one transaction; one answer per id, in the order of `ids`. A job named twice
    goes to `each`, which answers the second time for what the first did."""
    if not ids:
        return each(ids)  # (its refusal: no job ids given)
    named = Counter(ids)
    with store.transaction():
        states = store.lone_states(ids)
        lone = {i: states[i] for i in ids if i in states and named[i] == 1}  # (in ids' order)
        said = bulk(lone) if lone else {}
        rest = [i for i in ids if i not in said]
        others = iter(each(rest) if rest else [])
        return [ActionResult(i, True, said[i]) if i in said else next(others) for i in ids]


def kill_lone(engine: Engine) -> Bulk:
    """A kill's bulk: the waiting ones cancelled (running ones are stopped one at a time,
    finished ones answered so; a lone job cancels no waiter with it, whose ids a kill says)."""

    def bulk(lone: Mapping[int, JobState]) -> dict[int, str]:
        waiting = _waiting(lone)
        if waiting:
            now = engine.clock()
            engine.store.cancel_lone(waiting, now, KILLED)
            engine.publish(*(_cancel_told(job_id, now, KILLED) for job_id in waiting))
            engine.wake()
        return dict.fromkeys(waiting, "cancelled")

    return bulk


def remove_lone(
    engine: Engine,
    jobs: Mapping[int, Job],
    leftovers: Mapping[int, list[tuple[int, Path]]],
    removed: list[tuple[int, Path]],
) -> Bulk:
    """An rm's bulk, of the jobs read beforehand (`jobs`, with what removing each leaves to
    delete once committed, `leftovers`, added to `removed` for each job removed): those not
    running, nor held for a run that runs (removal_refused), are removed; a waiting one is
    cancelled first, as its watchers hear (its cancel, deleted with it, is not written)."""

    def bulk(lone: Mapping[int, JobState]) -> dict[int, str]:
        gone = [
            jobs[i]
            for i, state in lone.items()
            if i in jobs and state not in LIVE_STATES and removal_refused(engine, jobs[i]) is None
        ]
        waiting = _waiting({job.id: job.state for job in gone})
        now = engine.clock()
        engine.store.delete_jobs([job.id for job in gone])
        told: list[dict[str, object]] = []
        for job in gone:
            if job.id in waiting:
                told.append(_cancel_told(job.id, now, REMOVED))
            told.append({"id": job.id, "event": "rm"})  # (no state: it has none now)
            removed.extend(leftovers[job.id])
        engine.publish(*told)
        if waiting:
            engine.wake()
        return dict.fromkeys((job.id for job in gone), "removed")

    return bulk


def _waiting(states: Mapping[int, JobState]) -> dict[int, JobState]:
    """The waiting ones of `states`, each checked as one a verb may cancel."""
    waiting = {job_id: state for job_id, state in states.items() if state in WAITING_STATES}
    for state in waiting.values():
        transition(state, Event.CANCEL)  # (the table allows it: raises if it ever did not)
    return waiting


def _cancel_told(job_id: int, now: float, message: str) -> dict[str, object]:
    """What Engine.move tells watchers of a job's cancel (its started_at, None, unsaid)."""
    return {
        "id": job_id,
        "state": "cancelled",
        "event": "cancel",
        "detail": message,
        "ended_at": now,
    }


PieceAction = Callable[[Sequence[int]], list[ActionResult] | Awaitable[list[ActionResult]]]
"""A verb on a piece of the jobs named (JobVerbs.in_pieces): at once, or awaited (`rm`, whose
folders are deleted on a worker thread)."""


PIECE = 500
"""Jobs a verb on many handles between two breaths (~50 ms of work; rm's deletions apart)."""
NO_JOB_PIECE = 50_000
"""Answers of ids that name no job made between two breaths (~50-100 ms of work)."""
BREATH = 0.002
"""Seconds a verb on many jobs lets the event loop run between pieces: a request takes a few
turns of the loop, and `sleep(0)` gave it one turn per piece (another client then waited
0.5-1.5 s during a hold of 20,000 jobs; now ~0.1 s)."""


async def in_pieces(engine: Engine, action: PieceAction, ids: Sequence[int]) -> list[ActionResult]:
    """`action` on `ids`, PIECE jobs at a time, dispatch paused, with a breath between. The
    ids that name no job are told apart first (maybe_jobs) and answered at once, as the
    action answers one (no_job): `kill 3000-999999` of a queue up to job 2,500 went through
    its 997,000 ids 500 at a time, starting nothing for 10-15 s, to say `no job 3000-999999`."""
    if len(ids) <= PIECE:
        return await _answered(action(ids))
    maybe = maybe_jobs(engine.store, ids)
    asked = [job_id in maybe for job_id in ids]
    # One at least is the action's: what it refuses of the request as a whole (an edit's
    # values, NO_USER_FILES) it refuses still, whatever the ids.
    asked[0] = asked[0] or not any(asked)
    answers = iter(await _pieces(engine, action, list(compress(ids, asked))))
    named = list(zip(ids, asked, strict=True))
    results: list[ActionResult] = []
    for start in range(0, len(named), NO_JOB_PIECE):  # (not a second's work at once)
        these = named[start : start + NO_JOB_PIECE]
        results += [next(answers) if mine else _no_job(i) for i, mine in these]
        await asyncio.sleep(BREATH)
    return results


async def _pieces(engine: Engine, action: PieceAction, ids: Sequence[int]) -> list[ActionResult]:
    """`action` on `ids`, PIECE jobs at a time, dispatch paused, with a breath between."""
    if len(ids) <= PIECE:
        return await _answered(action(ids))
    results: list[ActionResult] = []
    with engine.dispatch_paused():
        for start in range(0, len(ids), PIECE):
            results += await _answered(action(ids[start : start + PIECE]))
            await asyncio.sleep(BREATH)
    return results


def maybe_jobs(store: Store, ids: Sequence[int]) -> set[int]:
    """Those of `ids` a job may have: none past the newest job's id (ids only grow); of the
    others, more than a piece are looked up in one query (~0.25 s for 800,000 ids, where
    the pieces took 10 s). A job removed meanwhile is the action's to answer for."""
    newest = store.list_job_ids(limit=1, newest_first=True)
    below = {job_id for job_id in ids if newest and job_id <= newest[0]}
    if len(below) <= PIECE:
        return below
    return set(store.list_job_ids(match=JobFilter(ids=tuple(below))))


def no_job(job_id: int) -> NotFound:
    """No job has `job_id`, in one wording (core/idspec.no_job_with): the service's, for a
    verb of one job and each of a verb on many (summarize gathers those), and the
    dashboard's for an id no job can have (past 64 bits, which SQLite refuses to look up)."""
    return NotFound(no_job_with([job_id]))


def _no_job(job_id: int) -> ActionResult:
    """The answer of a verb on many jobs for an id that names no job (JobVerbs._each's)."""
    return ActionResult(job_id, False, no_job_with([job_id]), status=NotFound.status)


async def _answered(
    results: list[ActionResult] | Awaitable[list[ActionResult]],
) -> list[ActionResult]:
    return results if isinstance(results, list) else await results
