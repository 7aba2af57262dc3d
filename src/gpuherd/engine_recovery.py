"""Recovery: what a (re)starting engine does with the jobs the database says are live.

The decisions are the pure core's (`core.recovery.reconcile`); this gathers what it needs
(pid files, recorded exit statuses, whether a pid is still our job) and carries them out:
re-attach to a job still running, record one that ended while no daemon watched, queue again
one that never started. A job whose stop had begun keeps the rest of its grace: also when its
shell has ended and only the processes it started run on (saving a checkpoint), which the
start-up pass for leftovers would otherwise kill at once.

A herd.db restored from an older backup may not know attempts that ran, or run, since: a
live job's own attempt is then superseded by them, and they are taken as the job's
(engine_restored.py); runs a job was held for are watched again (engine_held_runs.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd import jobfiles, seen_alive
from gpuherd.core.lifecycle import Ended
from gpuherd.core.model import Job
from gpuherd.core.recovery import (
    CatchUp,
    Drain,
    Finish,
    Observed,
    Reattach,
    Supersede,
    Unstart,
    in_grace,
    kill_due,
    lost_end,
    reconcile,
)
from gpuherd.core.run_time import paused_until, pauses
from gpuherd.core.states import LIVE_STATES, Event, JobState, OutcomeKind
from gpuherd.core.when import format_moment
from gpuherd.engine_endings import fail_orphaned_waiters, finish, stored_attempt
from gpuherd.engine_held_runs import watch_held_runs
from gpuherd.engine_learning import lower_learned_mem
from gpuherd.engine_restored import later_runs, take_later
from gpuherd.engine_taken import recorded_stop, recorded_usage, requeue_ended
from gpuherd.executors.base import RAY_PLACE_FILE, UNKNOWN_SIGNS, SignsOfLife
from gpuherd.executors.local_records import another_homes_run
from gpuherd.executors.ray_files import ray_last_seen
from gpuherd.stop_signals import sigterm_sent

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")


def recover(engine: Engine, now: float) -> None:
    """Reconcile what the database says is live with what runs (DESIGN principle 4)."""
    with engine.store.passing_over_damaged() as damaged:  # (each set aside: engine_damaged.py)
        live_jobs = engine.store.list_jobs(states=tuple(LIVE_STATES))
    engine.set_aside.found_running(damaged)
    alive = seen_alive.take(engine.store)  # (those the last daemon left running at its stop)
    observed = {job.id: _observe(engine, job, now, alive) for job in live_jobs}
    later = {job.id: plan for job in live_jobs if (plan := later_runs(engine, job, now))}
    jobs = {job.id: job for job in live_jobs}
    for action in reconcile(live_jobs, observed, now, later):
        job = jobs[action.job_id]
        if isinstance(action, Supersede):
            _supersede(engine, job, action, observed[job.id], later[job.id], now)
        elif isinstance(action, Reattach):
            _reattach(engine, job, action.pid)
        elif isinstance(action, Drain):
            # The executor takes the leader, gone, as one that ends at once, and the stop
            # re-armed with it lets the rest of the job's processes finish their grace.
            log.info("job %d: its shell ended while stopping; the rest get their grace", job.id)
            _reattach(engine, job, action.pid)
        elif isinstance(action, Finish):
            found = observed[job.id].pid
            _record_found_pid(engine, job, found, now)
            # A herd.db restored from a backup taken before the attempt was stopped (`kill`,
            # --timeout, `retry`) knows no stop: the daemon that saw it end wrote it in
            # attempt.json, and a kill stays a kill, not a `signal 15` failure retried
            # (--retries); so too its usage.
            stop, info = job.stop, _attempt_info(engine, job)
            reason, requeue = (stop.reason, stop.requeue) if stop else recorded_stop(info)
            ended = Ended(action.exit_code, action.signal, reason, requeue, _why_gone(engine, job))
            usage = recorded_usage(info)
            finish(engine, engine.store.get_job(job.id), ended, action.ended_at, now, usage=usage)
            _say_ended_unwatched(engine, job, observed[job.id], now)
        elif isinstance(action, Unstart):
            _unstart(engine, job, "daemon stopped before spawn")
            log.info("job %d: the last daemon stopped before starting it: queued again", job.id)
    watch_held_runs(engine, now)  # before taking later attempts: they run on those GPUs
    take_later(engine, later, now)
    fail_orphaned_waiters(engine, now)
    lower_learned_mem(engine, now)  # (an older daemon's, above what the GPUs give)
    # As when a daemon watched them end: no process of an ended attempt stays, also of one
    # that ended while no daemon ran, or just before the last one was killed.
    # (Attempts herd.db does not know are left running: their GPUs are held before any job
    # is placed, by what the executor tells of them, engine_unwatched.py.)
    set_aside = engine.set_aside
    engine.executor.end_leftovers(
        engine.layout.home_id, set(set_aside.held), set_aside.unwatched.seen
    )


def _observe(engine: Engine, job: Job, now: float, alive: dict[tuple[int, int], float]) -> Observed:
    folder = str(engine.layout.attempt_dir(job, job.attempt))
    key = engine.layout.attempt_key(job.id, job.attempt)
    executor = engine.executor
    pid = job.pid or executor.recorded_pid(folder)
    if pid is None:  # died right after the spawn: the job may not have written its pid yet
        pid = executor.find_leader(job.id, job.attempt, key)
    running = pid is not None and executor.is_running(pid, job.id, job.attempt, key, folder)
    # Read after asking whether it runs: the shell records its status before it exits, so a
    # job that ended meanwhile is seen with its status, not as one gone without (`lost`).
    status = executor.recorded_exit(folder)
    ended_at, signs = (status.ended_at if status else now), UNKNOWN_SIGNS
    if status is None and pid is not None and not running:  # lost: no shell wrote its end
        stopped = alive.get((job.id, job.attempt))  # counted running as the last daemon stopped
        if _ran_on_ray(folder):
            # Never this machine's signs (its node's boot is not known, its logs here are the
            # daemon's copies); and the last daemon saw it only through its actor's answers,
            # which may have stopped long before that daemon did (the cluster away).
            signs = SignsOfLife(ray_last_seen(Path(folder), stopped), None)
        else:
            signs = executor.signs_of_life(folder)
            if stopped is not None and (signs.last_seen is None or stopped > signs.last_seen):
                signs = replace(signs, last_seen=stopped)
        ended_at = lost_end(job.started_at, signs.last_seen, signs.booted, now)
    return Observed(
        pid=pid,
        running=running,
        exit_code=status.exit_code if status else None,
        signal=status.signal if status else None,
        recorded=status is not None,
        ended_at=ended_at,
        # Asked only where it decides something: one pass over /proc per job being stopped.
        outlived=pid is not None
        and not running
        and in_grace(job, now)
        and executor.outlived(pid, key),
        last_seen=signs.last_seen,
        booted=signs.booted,
    )


def _say_ended_unwatched(engine: Engine, job: Job, seen: Observed, now: float) -> None:
    """daemon.log tells a restart's story: the jobs that ended while no daemon watched them,
    and how, beside the ones re-attached (before, only those were said, and a job found
    lost after a crash or a reboot left no word in the log)."""
    attempt, after = stored_attempt(engine, job), engine.store.get_job(job.id)
    if attempt.outcome is None or after is None:
        return
    which = f"job {job.id} attempt {job.attempt}" + (f" (pid {seen.pid})" if seen.pid else "")
    folder = str(engine.layout.attempt_dir(job, job.attempt))
    ray = _ran_on_ray(folder)
    again = after.state is JobState.QUEUED
    why = "gpuherd retry" if job.stop is not None and job.stop.requeue else "--retries"
    if attempt.outcome.kind is OutcomeKind.LOST:
        log.warning(
            "%s is gone, with no exit status recorded (%s): %s",
            which,
            _how_lost(job, seen, attempt.ended_at, now, ray, folder, engine.layout.attempt_key),
            f"lost, queued again ({why})" if again else "the job is lost",
        )
        return
    ended = format_moment(attempt.ended_at or now, now)
    state = f"queued again ({why})" if again else after.state.value
    outcome = attempt.outcome.describe()
    log.info("%s ended at %s while no daemon watched it (%s): %s", which, ended, outcome, state)


def _how_lost(
    job: Job,
    seen: Observed,
    ended_at: float | None,
    now: float,
    ray: bool,
    folder: str,
    key_of: Callable[[int, int], str],
) -> str:
    """Why an attempt left no exit status, and when it ended as best known (lost_end): its
    shell had no chance to write one (the job's processes were SIGKILLed, or the machine
    restarted) while no daemon was its parent to see it; or the attempt's `folder`, where
    its shell writes it, was deleted (said as a SIGKILL, the user looked for a killer that
    never was). Of one that ran on a Ray cluster (`ray`), nothing is known but that it is
    gone: it may have ended any way there. Nor one whose pid runs on as another home's run
    of it (`key_of`: this home's attempt keys): this home is a copy of that one (home_id.py),
    whose daemon watches it."""
    booted, started = seen.booted, job.started_at
    if ray:
        how = "it ran on a Ray cluster, where no daemon saw how it ended"
    elif seen.pid is not None and another_homes_run(seen.pid, key_of(job.id, job.attempt)):
        how = (
            f"its pid {seen.pid} runs on as another home's run of it: this home is a copy "
            "(`cp -a`) of one still in use, whose daemon watches that run"
        )
    elif not os.path.isdir(folder):
        how = f"its folder {folder} was deleted, and how it ended with it"
    elif booted is None:  # (this machine's boot could not be read)
        how = "killed with SIGKILL, or the machine restarted, while no daemon watched it"
    elif started is not None and started < booted:
        how = f"the machine restarted at {format_moment(booted, now)}, after it started"
    else:
        how = "killed with SIGKILL while no daemon watched it"
    if ended_at is None:
        return how
    alive = ", when it was last seen alive" if ended_at == seen.last_seen else ""
    if ended_at == now and seen.last_seen is None:  # (no sign of life: the bound, lost_end)
        alive = ", when this daemon found it gone"
    return f"{how}; its end recorded at {format_moment(ended_at, now)}{alive}"


ABANDONED = (
    "it ran on a Ray cluster this daemon does not use (--abandon-running): its processes may"
    " go on there"
)


def _why_gone(engine: Engine, job: Job) -> str:
    """Why an attempt gone with no exit status is (its outcome's message), of one that ran on
    a Ray cluster: found by a daemon that runs jobs elsewhere (a home switched with
    --abandon-running), that it was given up, where "vanished" said its processes were gone
    while they may run on there; found by one on a Ray cluster, what that cluster tells
    (RayExecutor.gone_why: started again, its node gone...). Before, that one said
    --abandon-running too, which no one had given."""
    folder = str(engine.layout.attempt_dir(job, job.attempt))
    if not _ran_on_ray(folder):
        return ""
    gone_why = getattr(engine.executor, "gone_why", None)  # (a Ray executor's alone)
    return ABANDONED if gone_why is None else str(gone_why(folder))


def _ran_on_ray(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, RAY_PLACE_FILE))


def _supersede(
    engine: Engine, job: Job, action: Supersede, seen: Observed, later: CatchUp, now: float
) -> None:
    """Record how the database's attempt ended and queue the job, whose later ones ran or run."""
    then, ended = f"{later.first()} (herd.db did not know it)", action.ended
    if isinstance(ended, Unstart):
        _unstart(engine, job, f"attempt {job.attempt} never started, and {then}")
        return
    _record_found_pid(engine, job, seen.pid, now)
    done = Ended(ended.exit_code, ended.signal)
    usage = recorded_usage(_attempt_info(engine, job))
    requeue_ended(engine, job, done, ended.ended_at or now, then, usage)


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


def _record_found_pid(engine: Engine, job: Job, pid: int | None, now: float) -> None:
    """The daemon died between spawning and recording the pid: take it from the pid file."""
    if job.pid is None and pid is not None:
        engine.store.update_job(job.id, now, "spawn", pid=pid, detail=f"pid {pid} (recovered)")
        engine.store.update_attempt(job.id, job.attempt, pid=pid)


def _reattach(engine: Engine, job: Job, pid: int) -> None:
    # Its timers (--timeout, the rest of a stop's grace) run from the clock now, not from the
    # recovery's start: /proc passes on a busy machine take a while, and each stays when due.
    now = engine.clock()
    _record_found_pid(engine, job, pid, now)
    attempt = replace(stored_attempt(engine, job), pid=pid)
    paused = _paused_for(engine, job.id, attempt.started_at, now) if job.spec.timeout else 0.0
    engine.attempts.adopt(job, attempt, now, paused)
    log.info("re-attached to job %d (pid %d)", job.id, pid)
    if job.stop is not None:  # a kill or retry the last daemon had begun
        left = max(0.0, kill_due(job) - now)
        # Its SIGTERM now if it never went (the last daemon died between the stop's commit
        # and the signal), else not again. The SIGKILL stays when the stop had it due: the
        # rest of its grace, whatever it chose (longer than the job's own too).
        begun = sigterm_sent(engine.layout.attempt_dir(job, job.attempt))
        if not begun:
            said = "the last daemon stopped before its stop's SIGTERM: sent now, SIGKILL in"
            log.warning("job %d: %s %.1fs", job.id, said, left)
        engine.attempts.stop(job.id, job.stop.reason, job.stop.requeue, begun=begun, chosen=left)
    elif job.state is JobState.PAUSED:
        # Its SIGSTOP again (a stopped process is not stopped twice): the last daemon may
        # have stopped before it got there (a Ray actor still being created at the pause).
        engine.attempts.pause(job.id, True)
    elif engine.executor.stopped(pid):
        # herd.db says it runs, and it is stopped: a daemon killed between a pause's SIGSTOP
        # and its commit (or a `kill -STOP` from outside). As herd.db says, it runs on;
        # stopped, it would hold its GPUs for ever.
        log.warning("job %d: found stopped though it runs (not paused): resumed", job.id)
        engine.attempts.pause(job.id, False)


def _paused_for(engine: Engine, job_id: int, since: float, now: float) -> float:
    """Seconds the attempt begun at `since` has spent paused, from its pause/resume events
    (its --timeout does not count them)."""
    events = engine.store.pause_events([job_id]).get(job_id, [])
    return paused_until(now, *pauses(events, since))


def _attempt_info(engine: Engine, job: Job) -> dict[str, Any]:
    """The job's latest attempt's attempt.json ({} where it has none)."""
    return jobfiles.attempt_info(str(engine.layout.attempt_dir(job, job.attempt))) or {}
