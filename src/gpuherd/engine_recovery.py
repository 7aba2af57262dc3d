"""Recovery: what a (re)starting engine does with the jobs the database says are live.

The decisions are the pure core's (`core.recovery.reconcile`); this gathers what it needs
(pid files, recorded exit statuses, whether a pid is still our job) and carries them out:
re-attach to a job still running, record one that ended while no daemon watched, queue again
one that never started.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuherd.core.lifecycle import Ended
from gpuherd.core.model import Job
from gpuherd.core.recovery import Finish, Observed, Reattach, Unstart, reconcile
from gpuherd.core.states import LIVE_STATES, Event, JobState
from gpuherd.engine_endings import fail_orphaned_waiters, finish, stored_attempt

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")


def recover(engine: Engine, now: float) -> None:
    """Reconcile what the database says is live with what runs (DESIGN principle 4)."""
    live_jobs = engine.store.list_jobs(states=tuple(LIVE_STATES))
    observed: dict[int, Observed] = {}
    for job in live_jobs:
        folder = engine.layout.attempt_dir(job, job.attempt)
        pid = job.pid or engine.executor.recorded_pid(str(folder))
        if pid is None:  # died right after the spawn: the job may not have written its pid yet
            pid = engine.executor.find_leader(job.id, job.attempt)
        status = engine.executor.recorded_exit(str(folder))
        observed[job.id] = Observed(
            pid=pid,
            running=pid is not None
            and engine.executor.is_running(pid, job.id, job.attempt, str(folder)),
            exit_code=status.exit_code if status else None,
            signal=status.signal if status else None,
            recorded=status is not None,
            ended_at=status.ended_at if status else now,
        )
    jobs = {job.id: job for job in live_jobs}
    for action in reconcile(live_jobs, observed):
        job = jobs[action.job_id]
        if isinstance(action, Reattach):
            _reattach(engine, job, action.pid, now)
        elif isinstance(action, Finish):
            found = observed[job.id].pid
            _record_found_pid(engine, job, found, now)
            stop = job.stop
            ended = Ended(
                action.exit_code,
                action.signal,
                stop.reason if stop else None,
                stop.requeue if stop else False,
            )
            finish(engine, engine.store.get_job(job.id), ended, action.ended_at, now)
        elif isinstance(action, Unstart):
            engine.store.delete_attempt(job.id, job.attempt)
            engine.move(
                job,
                Event.RETRY,
                JobState.QUEUED,
                detail="daemon stopped before spawn",
                attempt=job.attempt - 1,
                started_at=None,
                assigned=(),
                pid=None,
            )
    fail_orphaned_waiters(engine, now)
    # As when a daemon watched them end: no process of an ended attempt stays, also of one
    # that ended while no daemon ran, or just before the last one was killed.
    engine.executor.end_leftovers(engine.layout.home_id)


def _record_found_pid(engine: Engine, job: Job, pid: int | None, now: float) -> None:
    """The daemon died between spawning and recording the pid: take it from the pid file."""
    if job.pid is None and pid is not None:
        engine.store.update_job(job.id, now, "spawn", pid=pid, detail=f"pid {pid} (recovered)")
        engine.store.update_attempt(job.id, job.attempt, pid=pid)


def _reattach(engine: Engine, job: Job, pid: int, now: float) -> None:
    _record_found_pid(engine, job, pid, now)
    attempt = replace(stored_attempt(engine, job), pid=pid)
    paused = _paused_for(engine, job.id, attempt.started_at, now) if job.spec.timeout else 0.0
    engine.attempts.adopt(job, attempt, now, paused)
    log.info("re-attached to job %d (pid %d)", job.id, pid)
    if job.stop is not None:  # a kill or retry the last daemon had begun
        left = max(0.0, job.stop.at + job.spec.grace - now)
        engine.attempts.stop(job.id, job.stop.reason, job.stop.requeue, grace=left, begun=True)


def _paused_for(engine: Engine, job_id: int, since: float, now: float) -> float:
    """Seconds the attempt begun at `since` has spent paused, from its pause/resume events
    (its --timeout does not count them)."""
    total, paused_at = 0.0, None
    for event in engine.store.events(job_id, limit=1_000_000):
        if event.at < since:
            continue
        if event.event == "pause" and paused_at is None:
            paused_at = event.at
        elif event.event == "resume" and paused_at is not None:
            total, paused_at = total + event.at - paused_at, None
    return total + (now - paused_at if paused_at is not None else 0.0)
