"""An attempt whose start is recorded but whose process never began: its job failed
(`spawn_error`: a missing folder, no such program) or queued again (the executor could not
start it yet). What is recorded of it is kept, when herd.db refuses it, and recorded with the
next tick's changes (Engine.unrecorded).

Before, herd.db refusing it (a full disk: the start's commit had fit, the failure's did not)
ended the engine's pass: the job stayed `running` for ever with no process (`kill` did
nothing), the jobs started later in that pass were never spawned, and the next daemon, reading
a start with no pid, queued it again and ran it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuherd import jobfiles
from gpuherd.core.lifecycle import held_unstarted
from gpuherd.core.model import Attempt, Job, Outcome
from gpuherd.core.states import LIVE_STATES, Event, JobState, OutcomeKind
from gpuherd.engine_endings import RETRY_NOT_STARTED, cancel_waiters
from gpuherd.executors.base import SpawnError

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

RETRY_RECORDING = 1.0
"""Seconds before a tick tries again what herd.db refused (the engine's ends and starts too)."""

Unrecorded = Callable[[], None]
"""Records, in the transaction it is called in, what herd.db refused when it happened."""


def fail_unspawned(
    engine: Engine, job: Job, attempt: Attempt, error: Exception, now: float
) -> None:
    """The command could not start (a missing folder, no such program): the attempt and the
    job fail with outcome `spawn_error`, and the jobs that waited for it are cancelled."""
    if isinstance(error, SpawnError):
        message = str(error)
    elif isinstance(error, OSError):  # its folder could not be made (jobfiles.prepare)
        message = (
            f"starting job {job.id}: cannot set up its folder {attempt.dir}: "
            f"{error.strerror or error}; check that the folders above it are folders you can "
            "write in, on a disk with room"
        )
    else:  # a bug in gpuherd
        log.error("starting job %d failed", job.id, exc_info=error)
        message = f"gpuherd could not start it: {error!r}"
    outcome = Outcome(OutcomeKind.SPAWN_ERROR, message=message)

    def record() -> None:
        if (current := _still_starting(engine, job, attempt)) is None:
            return
        engine.store.update_attempt(job.id, attempt.number, ended_at=now, outcome=outcome)
        engine.move(
            current, Event.FAIL, JobState.FAILED, detail=message, outcome=outcome, ended_at=now
        )
        cancel_waiters(engine, job.id, JobState.FAILED, now)
        # Its folders say so too, as an attempt's that ran and failed: FAILURE, attempt.json
        # and job.json (`job` may be the copy read before the start, of the attempt before).
        tried = replace(current, attempt=attempt.number)
        started_info = jobfiles.start_info(tried, attempt)

        def end() -> OSError | None:
            return jobfiles.record_end(engine.layout, tried, outcome, now, started_info)

        engine.store.after_commit(lambda: engine.add_paperwork(job.id, end))
        engine.store.after_commit(engine.wake)  # its GPUs are free for the next job

    record_or_keep(engine, record)


def requeue_unstarted(engine: Engine, job: Job, attempt: Attempt, message: str) -> None:
    """Undo the recorded start (as recovery does for a job that never spawned), have the next
    placement read the GPUs again (past the probe's cache) so that it sees what the executor
    saw (a node gone), and try again soon. A job paused meanwhile (its start failed late) is
    held instead: queued, it would run unpaused."""

    def record() -> None:
        if (current := _still_starting(engine, job, attempt)) is None:
            return
        event, state = Event.RETRY, JobState.QUEUED
        detail = f"not started, queued again: {message}"
        held: dict[str, object] = {}
        if current.state is JobState.PAUSED:
            event, state, detail = Event.RETRY_HELD, JobState.HELD, held_unstarted(job.id, message)
            held["release_at"] = None  # until released (an old --begin time would release it)
        engine.store.delete_attempt(job.id, attempt.number)
        engine.move(
            current,
            event,
            state,
            detail=detail,
            attempt=job.attempt,
            started_at=None,
            assigned=(),
            pid=None,
            **held,
        )

    record_or_keep(engine, record)
    engine.devices.mark_stale()
    engine.wake_later(RETRY_NOT_STARTED)  # not at once: a stale view must not spin the loop


def record_or_keep(engine: Engine, record: Unrecorded) -> None:
    """`record()` in a transaction of its own; kept for the next tick's if herd.db refuses it
    (a full disk), so that the job is never left `running` with no process."""
    try:
        with engine.store.transaction():
            record()
    except sqlite3.Error as exc:
        log.warning("recording a job that did not start failed, retrying: %s", exc)
        engine.unrecorded.append(record)
        engine.wake_later(RETRY_RECORDING)


def _still_starting(engine: Engine, job: Job, attempt: Attempt) -> Job | None:
    """The job as herd.db has it now, running (or paused) on `attempt`; None if it moved on
    since (a record kept for a later tick: a `kill` or `rm` may have ended it meanwhile)."""
    current = engine.store.get_job(job.id)
    if current is None or current.state not in LIVE_STATES or current.attempt != attempt.number:
        return None
    return current
