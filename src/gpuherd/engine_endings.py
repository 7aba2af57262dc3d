"""How attempts end: the outcome recorded, the job moved on (retry, done, failed...), and the
jobs that waited for a job that ended otherwise than they needed cancelled with it."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd import jobfiles, log_text
from gpuherd.attempts import Live
from gpuherd.core.lifecycle import (
    Ended,
    after_attempt,
    classify,
    dependency_failed,
    grow_request,
    put_back_by_hand,
    retry_wait,
)
from gpuherd.core.model import Attempt, HostUsage, Job, Outcome
from gpuherd.core.reasons_never import most_mem
from gpuherd.core.states import FINISHED_STATES, LIVE_STATES, Event, JobState, OutcomeKind
from gpuherd.core.units import format_duration
from gpuherd.engine_learning import learn_from_point, may_run_on
from gpuherd.executors.base import ExitStatus, NotStarted
from gpuherd.log_cap_watch import ended_reason, named_logs, recorded_bases
from gpuherd.log_disk import full_disk_folder, full_disk_message

if TYPE_CHECKING:
    from gpuherd.engine import Engine
    from gpuherd.store import Store

log = logging.getLogger("gpuherd.engine")

RETRY_NOT_STARTED = 0.5
"""Seconds before placing again after an executor could not start a job (NotStarted)."""


def flag_stalled(engine: Engine, job_id: int, silent_for: float) -> None:
    """A running job printed nothing for its --no-output-timeout: flag it, or stop it."""
    job = engine.store.get_job(job_id)
    if job is None or job.state not in LIVE_STATES:
        return  # ended meanwhile: a finished state published again would run its hook twice
    detail = f"no output for {format_duration(silent_for)}"
    with engine.store.transaction():  # the flag and its stop stored together, or neither
        engine.store.update_job(job_id, engine.clock(), "stalled", detail=detail)
        state = job.state.value
        engine.publish({"id": job_id, "state": state, "event": "stalled", "detail": detail})
        if job.spec.kill_on_no_output:
            engine.stop_job(job_id, OutcomeKind.STALLED)


def finish(
    engine: Engine,
    job: Job | None,
    ended: Ended,
    ended_at: float | None,
    now: float,
    live: Live | None = None,
    peak: int = 0,
    usage: HostUsage | None = None,
) -> None:
    """Record how an attempt ended and move its job on (retry, done, failed...). Its measured
    GPU memory peak is `live`'s (watched), else `peak` (a held run's: engine_held_runs.py;
    0 for one no daemon watched), recorded with the attempt, as a sweep's learning and a
    CUDA OOM retry's larger --mem read it; so is its host `usage`, where the executor
    measured it (None: not measured)."""
    if job is None or job.state not in LIVE_STATES:
        return
    tail = ""
    if ended.exit_code not in (0, None):
        tail = stderr_tail(engine, job)
    outcome = said_how_large(engine, job, classify(ended, tail), live)
    nxt = after_attempt(job, ended, outcome)  # (the message added below changes no state)
    if outcome.kind in (OutcomeKind.EXIT, OutcomeKind.SIGNAL) and not outcome.success:
        retried = nxt.state is JobState.QUEUED
        full = live.full_disk if live else None
        outcome = said_if_its_disk_was_full(engine, job, outcome, retried, full)
    ended_at = ended_at or now
    peak = live.peak if live else peak
    engine.store.update_attempt(
        job.id,
        job.attempt,
        ended_at=ended_at,
        outcome=outcome,
        peak_mem=peak or None,
        peak_rss=usage.peak_rss if usage else None,
        cpu_time=usage.cpu_time if usage else None,
    )
    changes: dict[str, object] = {}
    detail = outcome.describe()
    if nxt.state is JobState.QUEUED and outcome.kind is OutcomeKind.CUDA_OOM:
        gpus = may_run_on(engine)
        most = most_mem(job.spec.gpus, gpus, engine.policy, job.spec.only_gpus)
        ran_on = most_mem(len(job.gpus), [d for d in gpus if d.index in job.gpus], engine.policy)
        mem, exclusive = grow_request(job.spec.mem, peak, most, ran_on)
        # (a job exclusive by its own --exclusive stays so, whatever its growth asks)
        changes = {"mem": mem, "exclusive": int(exclusive or job.spec.exclusive)}
    delay = job.spec.retry_delay
    if nxt.state is JobState.QUEUED and delay and not ended.requeue:  # not a user's retry
        due, said = retry_wait(ended_at, delay, now)  # from its end: maybe while no daemon ran
        detail += said
        if due is not None:
            changes["release_at"] = due
    # A `retry` of a running job puts it back, as of a finished one: not ended (its attempt
    # keeps how it ended), its retries anew. An automatic retry keeps the end that made it.
    ending: Mapping[str, object] = (
        put_back_by_hand(job) if ended.requeue else {"ended_at": ended_at, "outcome": outcome}
    )
    engine.move(job, nxt.event, nxt.state, detail=detail, stop_reason=None, **ending, **changes)
    if "release_at" in changes:
        engine.begins.arm()
    started = live.started_info if live else jobfiles.start_info(job, stored_attempt(engine, job))
    if started.get("git") is None and job.spec.git is not None:
        started = {**started, "git": job.spec.git}  # (git answered after it started)
    # (Written after the tick's spawns, or before that of a job that waited for it: a retry
    # of the job may have started meanwhile.)
    engine.add_paperwork(
        job.id,
        lambda: jobfiles.record_end(
            engine.layout,
            job,
            outcome,
            ended_at,
            started,
            job.id not in engine.attempts.live,
            usage,
            ended.requeue,
        ),
    )
    if nxt.cancel_waiters:
        cancel_waiters(engine, job.id, nxt.state, now)
    if nxt.state is JobState.SUCCEEDED and job.spec.sweep and peak:
        learn_from_point(engine, job.spec.sweep, peak, now)  # (its siblings: engine_learning)


def finish_exits(engine: Engine, exits: Sequence[tuple[Live, ExitStatus]], now: float) -> None:
    """Record how these watched attempts ended (their processes have exited), each as it
    ended: by its exit status, and the stop gpuherd had asked of it, if any."""
    exits, jobs = engine.set_aside.readable_ends(exits)  # (those with rows that read)
    for live, status in exits:
        if status.lost:  # its machine may have gone with it (a Ray node): read the GPUs again
            engine.devices.mark_stale()
        if status.unstarted is not None:
            not_started(engine, jobs.get(live.job_id), status.unstarted, now)
            continue
        ended = Ended(status.exit_code, status.signal, live.stop_reason, live.requeue, status.why)
        finish(engine, jobs.get(live.job_id), ended, status.ended_at, now, live, usage=status.usage)


def not_started(engine: Engine, job: Job | None, error: Exception, now: float) -> None:
    """The executor found, after its `launch` had returned, that the attempt never started
    (a Ray actor that could not be created): as if `launch` had raised `error`."""
    if job is None or job.state not in LIVE_STATES:
        return
    from gpuherd.engine_unspawned import fail_unspawned, requeue_unstarted  # (it imports this)

    attempt = stored_attempt(engine, job)
    if not isinstance(error, NotStarted):  # (its folders get the failure: fail_unspawned)
        fail_unspawned(engine, job, attempt, error, now)
        return
    earlier = [a for a in engine.store.attempts(job.id) if a.number < job.attempt]
    before = max(earlier, key=lambda a: a.number, default=None)
    # Its attempt.json and job.json, written a second after the launch (Attempts.
    # _record_start), say it started: nothing did.
    job_dir = str(engine.layout.job_dir(job))
    jobfiles.unrecord_start(attempt.dir, job_dir, before.dir if before else None)
    number = before.number if before else 0
    requeue_unstarted(engine, replace(job, attempt=number), attempt, str(error))


def stderr_tail(engine: Engine, job: Job) -> str:
    """The end of the job's latest attempt's stderr, where that attempt wrote it: what tells a
    CUDA out-of-memory error (core/lifecycle.classify)."""
    files = engine.store.attempt_files(job.id, job.attempt)
    return log_text.tail(engine.layout.log_file(job, job.attempt, "stderr", files))


def said_if_its_disk_was_full(
    engine: Engine, job: Job, outcome: Outcome, retried: bool, seen: Path | None = None
) -> Outcome:
    """`outcome`, saying so if the disk of the attempt's logs was full as it ended (`seen`:
    found so as its end could not be recorded): a job killed by a failed write leaves only
    `exit 1` and a log that stops (log_disk.py)."""
    if outcome.message:
        return outcome
    if (folder := seen or full_disk_folder(_log_files(engine, job))) is None:
        return outcome
    said = full_disk_message(folder, job.id, retried, engine.layout.one_shot)
    return replace(outcome, message=said)


def _log_files(engine: Engine, job: Job) -> Iterator[Path]:
    files = engine.store.attempt_files(job.id, job.attempt)
    return (engine.layout.log_file(job, job.attempt, s, files) for s in ("stdout", "stderr"))


def note_full_disks(engine: Engine, lives: Iterable[Live]) -> None:
    """Of ended attempts whose end herd.db refused (a full disk, which their logs may share),
    note the folder of their logs if its disk is full now: recorded once there is room, the
    end was said without its reason, the disk no longer full."""
    for live in lives:
        if live.full_disk is None and (job := engine.store.get_job(live.job_id)) is not None:
            live.full_disk = full_disk_folder(_log_files(engine, job))


def said_how_large(engine: Engine, job: Job, outcome: Outcome, live: Live | None) -> Outcome:
    """`outcome`, saying which log grew past the job's --max-log-size, and to what, if that
    is why it was stopped (read as it ended: also for a stop a restarted daemon finished,
    from where its start record says its logs began)."""
    cap = job.spec.max_log_size
    if outcome.kind is not OutcomeKind.LOG_TOO_LARGE or cap is None:
        return outcome
    files = engine.store.attempt_files(job.id, job.attempt)
    logs = named_logs(engine.layout, job, job.attempt, files)
    if live is not None:
        bases = live.log_bases
    else:
        bases = recorded_bases(
            jobfiles.attempt_info(str(engine.layout.attempt_dir(job, job.attempt)))
        )
    return replace(outcome, message=ended_reason(logs, cap, bases))


def stored_attempt(engine: Engine, job: Job) -> Attempt:
    """The job's latest attempt as the database has it (for one no daemon watched)."""
    for attempt in engine.store.attempts(job.id):
        if attempt.number == job.attempt:
            return attempt
    folder = str(engine.layout.attempt_dir(job, job.attempt))  # never missing for a started job
    started = job.started_at if job.started_at is not None else engine.clock()
    return Attempt(job.id, job.attempt, job.gpus, (), folder, engine.host, started)


def cancel_waiters(engine: Engine, job_id: int, state: JobState, now: float) -> list[int]:
    """Jobs waiting for `job_id`, which ended in `state`, that it can no longer let run (it
    failed and they are `--after` it, it succeeded and they are `--after-fail` it) end as
    dependency_failed, and so on, transitively: a cancel meets an `--after-fail` of the
    job cancelled, and leaves an `--after` of it unmet. Their ids (a `kill` says them)."""
    unmet = waiters_left_unmet(engine.store, job_id, state)
    for waiter_id, dep_id, dep_state in unmet:
        waiter = engine.store.get_job(waiter_id)
        if waiter is not None:
            _cancel_waiter(engine, waiter, dep_id, dep_state, now)
    return [waiter_id for waiter_id, _, _ in unmet]


def waiters_left_unmet(
    store: Store, job_id: int, state: JobState
) -> list[tuple[int, int, JobState]]:
    """The jobs cancel_waiters cancels were `job_id` to end in `state` now, each with the job
    it waited for and that job's end, found before any is cancelled (read only): a kill of a
    running job names them before it ends."""
    pending, found = [(job_id, state)], {}
    while pending:
        dep_id, dep_state = pending.pop()
        for waiter_id in store.waiters_of(dep_id, dep_state):
            if waiter_id not in found:  # (one waiting for two of them is found twice)
                found[waiter_id] = (dep_id, dep_state)
                pending.append((waiter_id, JobState.CANCELLED))
    return [(waiter_id, *dep) for waiter_id, dep in found.items()]


def waiters_cancelled_at_stop(engine: Engine, job: Job, cancelled_first: Set[int]) -> list[int]:
    """The jobs cancelled once the stop under way of running `job` ends it, as cancel_waiters
    will cancel them then: none for a stop that queues it again (`retry` of a running job),
    or one it is retried after (a timeout, with --retries left). Those of `cancelled_first`
    (a kill names them too: it cancels them now) and their waiters are left out."""
    live = engine.live.get(job.id)
    if live is None:
        return []
    ended = Ended(None, None, stop_reason=live.stop_reason, requeue=live.requeue)
    nxt = after_attempt(job, ended, classify(ended))
    if not nxt.cancel_waiters:
        return []
    waiters = {w for w, _, _ in waiters_left_unmet(engine.store, job.id, nxt.state)}
    for first in waiters & cancelled_first:
        theirs = waiters_left_unmet(engine.store, first, JobState.CANCELLED)
        waiters -= {first, *(waiter_id for waiter_id, _, _ in theirs)}
    return sorted(waiters)


def fail_orphaned_waiters(
    engine: Engine, now: float, ids: Sequence[int] | None = None
) -> dict[int, tuple[int, JobState]]:
    """Cancel queued jobs (these, or all) whose dependency already ended otherwise than they
    wait for (core/deps.never_met): each one cancelled, with the dependency it names (id and
    end)."""
    with engine.store.passing_over_damaged():  # (set aside by the scheduler's reads)
        jobs = (
            engine.store.get_jobs(list(ids)).values()
            if ids is not None
            else engine.store.list_jobs(states=(JobState.QUEUED, JobState.HELD))
        )
    cancelled: dict[int, tuple[int, JobState]] = {}
    for job in jobs:
        unmet = [(d, JobState(s)) for d, s, _ in engine.store.unmet_deps(job.id)]
        failed = [(d, s) for d, s in unmet if s in FINISHED_STATES]  # ended, yet unmet
        if failed and job.state in (JobState.QUEUED, JobState.HELD):
            _cancel_waiter(engine, job, *failed[0], now)
            cancel_waiters(engine, job.id, JobState.CANCELLED, now)
            cancelled[job.id] = failed[0]
    return cancelled


def _cancel_waiter(
    engine: Engine, waiter: Job, dep_id: int, dep_state: JobState, now: float
) -> None:
    outcome = dependency_failed(dep_id, dep_state)
    engine.move(
        waiter,
        Event.CANCEL,
        JobState.CANCELLED,
        detail=outcome.message,
        outcome=outcome,
        ended_at=now,
    )
