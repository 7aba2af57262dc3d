"""Recovery: what a (re)starting engine does with the jobs the database says are live.

The decisions are the pure core's (`core.recovery.reconcile`); this gathers what it needs
(pid files, recorded exit statuses, whether a pid is still our job) and carries them out:
re-attach to a job still running, record one that ended while no daemon watched, queue again
one that never started. A job whose stop had begun keeps the rest of its grace: also when its
shell has ended and only the processes it started run on (saving a checkpoint), which the
start-up pass for leftovers would otherwise kill at once.

A herd.db restored from an older backup may say a job is queued, ran an earlier attempt, or
finished (a `retry` came after the backup) while a later attempt of it runs: starting that
attempt again would run the job twice, in one folder. Such an attempt, found in its folder
and verified as a re-attached one is, is adopted on the GPUs its folder recorded; where it
cannot be (GPUs unknown or taken), its job is held, naming the process (docs/reliability.md).
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuherd import jobfiles
from gpuherd.core.lifecycle import Ended, classify
from gpuherd.core.model import Attempt, Job
from gpuherd.core.recovery import (
    Adopt,
    Drain,
    Finish,
    Found,
    Observed,
    Reattach,
    Supersede,
    Unstart,
    in_grace,
    kill_due,
    reconcile,
    take_over,
    unwatched,
)
from gpuherd.core.run_time import paused_until, pauses
from gpuherd.core.states import FINISHED_STATES, LIVE_STATES, Event, JobState
from gpuherd.engine_endings import fail_orphaned_waiters, finish, stored_attempt
from gpuherd.executors.local_records import PROCESS_FILE
from gpuherd.layout import attempt_path

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

_NOT_LIVE = tuple(s.value for s in (JobState.QUEUED, JobState.HELD, *sorted(FINISHED_STATES)))
"""The jobs a later attempt found running is taken over for (`_take_over`)."""


def recover(engine: Engine, now: float) -> None:
    """Reconcile what the database says is live with what runs (DESIGN principle 4)."""
    live_jobs = engine.store.list_jobs(states=tuple(LIVE_STATES))
    observed = {job.id: _observe(engine, job, now) for job in live_jobs}
    later = {job.id: run for job in live_jobs if (run := _later_attempt(engine, job))}
    jobs = {job.id: job for job in live_jobs}
    for action in reconcile(live_jobs, observed, now, later):
        job = jobs[action.job_id]
        if isinstance(action, Supersede):
            _supersede(engine, job, action, observed[job.id], later[job.id], now)
        elif isinstance(action, Reattach):
            _reattach(engine, job, action.pid, now)
        elif isinstance(action, Drain):
            # The executor takes the leader, gone, as one that ends at once, and the stop
            # re-armed with it lets the rest of the job's processes finish their grace.
            log.info("job %d: its shell ended while stopping; the rest get their grace", job.id)
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
            _unstart(engine, job, "daemon stopped before spawn")
    _take_over(engine, later, now)
    fail_orphaned_waiters(engine, now)
    # As when a daemon watched them end: no process of an ended attempt stays, also of one
    # that ended while no daemon ran, or just before the last one was killed.
    engine.executor.end_leftovers(engine.layout.home_id)


def _observe(engine: Engine, job: Job, now: float) -> Observed:
    folder = str(engine.layout.attempt_dir(job, job.attempt))
    key = engine.layout.attempt_key(job.id, job.attempt)
    executor = engine.executor
    pid = job.pid or executor.recorded_pid(folder)
    if pid is None:  # died right after the spawn: the job may not have written its pid yet
        pid = executor.find_leader(job.id, job.attempt, key)
    status = executor.recorded_exit(folder)
    running = pid is not None and executor.is_running(pid, job.id, job.attempt, key, folder)
    return Observed(
        pid=pid,
        running=running,
        exit_code=status.exit_code if status else None,
        signal=status.signal if status else None,
        recorded=status is not None,
        ended_at=status.ended_at if status else now,
        # Asked only where it decides something: one pass over /proc per job being stopped.
        outlived=pid is not None
        and not running
        and in_grace(job, now)
        and executor.outlived(pid, key),
    )


def _later_attempt(engine: Engine, job: Job) -> Found | None:
    """The latest attempt after the job's own that runs now, found in its folder: one stat
    for most jobs (no such folder)."""
    found, number = None, job.attempt + 1
    while (folder := engine.layout.attempt_dir(job, number)).is_dir():
        pid = engine.executor.recorded_pid(str(folder))
        key = engine.layout.attempt_key(job.id, number)
        if pid is not None and engine.executor.is_running(pid, job.id, number, key, str(folder)):
            found = _found(number, pid, str(folder))
        number += 1
    return found


def _found(number: int, pid: int, folder: str) -> Found:
    """What the attempt's folder recorded of its start: attempt.json, written a second after
    it (a daemon stopped sooner left none), else the process file's time."""
    process = os.path.join(folder, PROCESS_FILE)
    try:
        info = jobfiles.attempt_info(folder)
        if info is None:
            raise ValueError("no attempt.json")
        gpus = tuple(int(i) for i in info["gpus"])
        uuids = tuple(str(u) for u in info.get("gpu_uuids") or ())
        host, started = str(info["host"]), float(info["started_at"])
    except (ValueError, KeyError, TypeError):
        try:
            return Found(number, pid, folder, None, started_at=os.stat(process).st_mtime)
        except OSError:
            return Found(number, pid, folder, None)
    return Found(number, pid, folder, gpus, uuids, host, started)


def _supersede(
    engine: Engine, job: Job, action: Supersede, seen: Observed, later: Found, now: float
) -> None:
    """Record how the database's attempt ended and queue the job, whose later attempt runs."""
    ended, runs = action.ended, f"attempt {later.attempt} runs (herd.db did not know it)"
    if isinstance(ended, Unstart):
        _unstart(engine, job, f"attempt {job.attempt} never started, and {runs}")
        return
    _record_found_pid(engine, job, seen.pid, now)
    tail = jobfiles.tail(engine.layout.attempt_dir(job, job.attempt) / "stderr.log")
    outcome = classify(Ended(ended.exit_code, ended.signal), tail)
    ended_at = ended.ended_at or now
    engine.store.update_attempt(job.id, job.attempt, ended_at=ended_at, outcome=outcome)
    detail = f"attempt {job.attempt} ended ({outcome.describe()}), and {runs}"
    engine.move(
        job,
        Event.RETRY,
        JobState.QUEUED,
        detail=detail,
        ended_at=ended_at,
        outcome=outcome,
        stop_reason=None,
    )


def _unstart(engine: Engine, job: Job, detail: str) -> None:
    """Undo the recorded start of an attempt that never spawned: the job is queued again."""
    engine.store.delete_attempt(job.id, job.attempt)
    engine.move(
        job,
        Event.RETRY,
        JobState.QUEUED,
        detail=detail,
        attempt=job.attempt - 1,
        started_at=None,
        assigned=(),
        pid=None,
    )


def _take_over(engine: Engine, later: dict[int, Found], now: float) -> None:
    """Adopt, or else hold, each queued, held or finished job whose later attempt runs."""
    waiting = [
        (job, found)
        for job in _with_later_folder(engine, later)
        if (found := later.get(job.id) or _later_attempt(engine, job))
    ]
    if not waiting:
        return
    jobs = {job.id: job for job, _ in waiting}
    held = engine.reservations()
    for decision in take_over(waiting, engine.device_listing(), held, engine.policy):
        job, found = jobs[decision.job_id], decision.found
        if isinstance(decision, Adopt):
            _adopt(engine, job, found, now)
        else:
            _hold(engine, job, found, decision.why, now)


def _with_later_folder(engine: Engine, later: dict[int, Found]) -> list[Job]:
    """The queued, held and finished jobs that are in `later`, or have a folder for their
    next attempt (a finished one's: a `retry` after the backup). One `access` each, by text:
    with 100,000 queued, building every Job and a Path for each made a start 2 s slower."""
    layout = engine.layout
    ids = [
        job_id
        for job_id, attempt, folder in engine.store.attempt_folders(_NOT_LIVE)
        if job_id in later or os.access(attempt_path(layout, job_id, folder, attempt + 1), os.F_OK)
    ]
    jobs = engine.store.get_jobs(ids)
    return [jobs[job_id] for job_id in ids if job_id in jobs]


def _adopt(engine: Engine, job: Job, found: Found, now: float) -> None:
    gpus = found.gpus or ()
    said = job.state.value
    if job.state is not JobState.QUEUED:  # released or retried since the backup: say so
        event = Event.RELEASE if job.state is JobState.HELD else Event.RETRY
        engine.move(job, event, JobState.QUEUED, detail=f"attempt {found.attempt} runs")
        job = replace(job, state=JobState.QUEUED)
    started = found.started_at if found.started_at is not None else now
    attempt = Attempt(
        job.id,
        found.attempt,
        gpus,
        found.gpu_uuids,
        found.folder,
        found.host or engine.host,
        started,
        pid=found.pid,
        mem=job.spec.mem,
    )
    engine.store.add_attempt(attempt)
    on = f"GPU {','.join(map(str, gpus))}" if gpus else "no GPU"
    detail = (
        f"adopted attempt {found.attempt} (pid {found.pid}) on {on}: it runs, but herd.db "
        f"said {said} (restored from an older backup?)"
    )
    engine.move(
        job,
        Event.START,
        JobState.RUNNING,
        detail=detail,
        attempt=found.attempt,
        started_at=started,
        ended_at=None,
        assigned=gpus,
        pid=found.pid,
        outcome=None,
        release_at=None,
    )
    running = replace(
        job,
        state=JobState.RUNNING,
        attempt=found.attempt,
        gpus=gpus,
        pid=found.pid,
        started_at=started,
        ended_at=None,
        outcome=None,
        stop=None,
    )
    engine.attempts.adopt(running, attempt, now)
    log.warning("job %d: %s", job.id, detail)


def _hold(engine: Engine, job: Job, found: Found, why: str, now: float) -> None:
    """Hold the job, numbered past the found attempt: a release starts the next one, in a
    folder of its own. The found attempt, which the database does not know (it records no
    attempt row), runs on unwatched: the start's pass for leftovers leaves it alone."""
    detail = (
        f"{unwatched(found.attempt, found.pid)}, but herd.db did not know it (restored from "
        f"an older backup?), and it cannot be adopted: {why}. Held so that it does not run "
        f"twice: once that process has ended, `gpuherd release {job.id}` runs the job again; "
        f"`gpuherd kill {job.id}` cancels it"
    )
    if job.state is JobState.HELD:
        engine.store.update_job(
            job.id, now, Event.HOLD.value, detail=detail, attempt=found.attempt, release_at=None
        )
    else:  # queued; or finished, and retried since the backup
        event = Event.HOLD if job.state is JobState.QUEUED else Event.RETRY_HELD
        changes = {"attempt": found.attempt, "release_at": None, "ended_at": None}
        engine.move(job, event, JobState.HELD, detail=detail, **changes)
    log.warning("job %d: %s", job.id, detail)


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
        left = max(0.0, kill_due(job) - now)
        engine.attempts.stop(job.id, job.stop.reason, job.stop.requeue, grace=left, begun=True)


def _paused_for(engine: Engine, job_id: int, since: float, now: float) -> float:
    """Seconds the attempt begun at `since` has spent paused, from its pause/resume events
    (its --timeout does not count them)."""
    events = engine.store.pause_events([job_id]).get(job_id, [])
    return paused_until(now, *pauses(events, since))
