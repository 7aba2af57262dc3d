"""A herd.db restored from an older backup: attempts that ran, or run, while it did not know.

The database may say a job is queued, held, runs an earlier attempt, or finished (a `retry`
came after the backup), while later attempts of it ran since: their folders record them. A
restart takes them as the job's own (docs/reliability.md, section 24): one that ended is
recorded as it ended (its exit status, GPUs and times from its folder), and the job's state
follows from it, so a finished run never runs again; one that runs is adopted on the GPUs
its folder recorded, or, where it cannot be (GPUs unknown or taken), its job is held, naming
the process, with that process's GPUs reserved for it until it ends. The decisions are the
pure core's (`core.recovery`: catch_up, take_over); this reads the folders and applies them.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpuherd import jobfiles
from gpuherd.attempt_numbers import ran_there
from gpuherd.attempts import HeldRun
from gpuherd.core.lifecycle import Ended, classify
from gpuherd.core.model import Attempt, Job
from gpuherd.core.recovery import (
    Adopt,
    CatchUp,
    Found,
    Ran,
    Take,
    back_to_queue,
    catch_up,
    reservation,
    take_over,
    unwatched,
    unwatched_run,
)
from gpuherd.core.states import FINISHED_STATES, Event, JobState, OutcomeKind
from gpuherd.engine_endings import finish
from gpuherd.executors.base import ExitStatus
from gpuherd.executors.local_records import PROCESS_FILE
from gpuherd.layout import attempt_path

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

_NOT_LIVE = tuple(s.value for s in (JobState.QUEUED, JobState.HELD, *sorted(FINISHED_STATES)))
"""The jobs whose later attempts are taken (`take_later`)."""
_STOPPED = {OutcomeKind.KILLED, OutcomeKind.TIMEOUT, OutcomeKind.STALLED}
"""Outcomes of an attempt gpuherd stopped: known from its attempt.json alone."""
UNWATCHED_ENDED = "unwatched-ended"
"""The event of a held job whose unwatched run has ended: its GPUs are free again."""


def later_runs(engine: Engine, job: Job, now: float) -> CatchUp:
    """The attempts past the job's own whose folders record a run of it, and what to make of
    them: one stat for most jobs (no such folder)."""
    runs: list[Ran | Found] = []
    number = job.attempt + 1
    while (folder := engine.layout.attempt_dir(job, number)).is_dir():
        if (run := _run_in(engine, job, number, str(folder), now)) is not None:
            runs.append(run)
        number += 1
    return catch_up(job.id, runs)


def _run_in(engine: Engine, job: Job, number: int, folder: str, now: float) -> Ran | Found | None:
    executor = engine.executor
    pid = executor.recorded_pid(folder)
    if pid is None:  # never spawned: a daemon stopped between recording a start and the spawn
        return None
    key = engine.layout.attempt_key(job.id, number)
    if executor.is_running(pid, job.id, number, key, folder):  # verified as a re-attached one
        return _found(number, pid, folder)
    if not ran_there(executor, folder, job.id):  # another job's (a sweep point run again)
        return None
    return _ran(number, pid, folder, executor.recorded_exit(folder), now)


def _started(info: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...], str, float]:
    """An attempt's GPUs, their UUIDs, host and start, as its attempt.json recorded them;
    ValueError, KeyError or TypeError where it does not."""
    gpus = tuple(int(i) for i in info["gpus"])
    uuids = tuple(str(u) for u in info.get("gpu_uuids") or ())
    return gpus, uuids, str(info["host"]), float(info["started_at"])


def _found(number: int, pid: int, folder: str) -> Found:
    """What the attempt's folder recorded of its start: attempt.json, written a second after
    it (a daemon stopped sooner left none), else the process file's time."""
    try:
        info = jobfiles.attempt_info(folder)
        if info is None:
            raise ValueError("no attempt.json")
        gpus, uuids, host, started = _started(info)
    except (ValueError, KeyError, TypeError):
        try:
            started_at = os.stat(os.path.join(folder, PROCESS_FILE)).st_mtime
            return Found(number, pid, folder, None, started_at=started_at)
        except OSError:
            return Found(number, pid, folder, None)
    return Found(number, pid, folder, gpus, uuids, host, started)


def _ran(number: int, pid: int, folder: str, status: ExitStatus | None, now: float) -> Ran:
    """How an ended attempt's folder recorded it: see core.recovery.Ran."""
    info = jobfiles.attempt_info(folder) or {}
    ran = Ran(number, pid, folder, status.ended_at if status else now)
    if status is not None:
        ran = replace(ran, exit_code=status.exit_code, signal=status.signal)
    try:  # why it ended, as the daemon that watched its end wrote it (record_end)
        kind = OutcomeKind(info["outcome"])
        code, signal = info.get("exit_code"), info.get("signal")
        ran = replace(
            ran,
            ended_at=float(info["ended_at"]),
            exit_code=None if code is None else int(code),
            signal=None if signal is None else int(signal),
            stop_reason=kind if kind in _STOPPED else None,
        )
    except (ValueError, KeyError, TypeError):
        pass  # ended while no daemon watched: the process file's status (or lost)
    try:
        gpus, uuids, host, started = _started(info)
    except (ValueError, KeyError, TypeError):
        return ran  # no attempt.json: its GPUs and start are not known
    return replace(ran, gpus=gpus, gpu_uuids=uuids, host=host, started_at=started)


def take_later(engine: Engine, later: dict[int, CatchUp], now: float) -> None:
    """Take the later attempts of each queued, held or finished job (those in `later`, whose
    own attempt a restart found superseded, too): record the ended ones, then adopt, or
    else hold, the ones that run."""
    waiting = [
        (job, plan)
        for job in _with_later_folder(engine, later)
        if (plan := later.get(job.id) or later_runs(engine, job, now))
    ]
    for job, plan in waiting:
        for i, take in enumerate(plan.takes):
            then = CatchUp(plan.takes[i + 1 :], plan.runs).first()
            _take(engine, engine.store.get_job(job.id) or job, take, then, now)
    running = {job.id: plan.runs for job, plan in waiting if plan.runs is not None}
    if not running:
        return
    jobs = engine.store.get_jobs(list(running))
    pairs = [(jobs[job_id], found) for job_id, found in running.items() if job_id in jobs]
    devices, held = engine.device_listing(), engine.reservations()
    for decision in take_over(pairs, devices, held, engine.policy):
        job, found = jobs[decision.job_id], decision.found
        if isinstance(decision, Adopt):
            _adopt(engine, job, found, now)
        else:
            _hold(engine, job, found, decision.why, now)


def _with_later_folder(engine: Engine, later: dict[int, CatchUp]) -> list[Job]:
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


def _to_queue(engine: Engine, job: Job, detail: str) -> Job:
    """Put the job back in the queue (released or retried since the backup: say so)."""
    event = back_to_queue(job.state)
    if event is None:
        return job
    engine.move(job, event, JobState.QUEUED, detail=detail)
    return replace(job, state=JobState.QUEUED)


def _on(gpus: tuple[int, ...]) -> str:
    return f"GPU {','.join(map(str, gpus))}" if gpus else "no GPU"


def _take(engine: Engine, job: Job, take: Take, then: str, now: float) -> None:
    """Record an attempt that ended while herd.db did not know it, as the watching daemon
    would have: its start, then its end, from which the job's state follows (or, where a
    later attempt ran, `then`, the job is queued for that one)."""
    ran = take.ran
    job = _to_queue(engine, job, f"attempt {ran.attempt} ran")
    started = ran.started_at if ran.started_at is not None else ran.ended_at
    attempt = _attempt(engine, job, ran, started)
    known = ran.started_at is not None  # else its folder has no attempt.json
    detail = (
        f"attempt {ran.attempt} (pid {ran.pid}){f' on {_on(ran.gpus)}' if known else ''} "
        "taken from its folder: it ran and ended while herd.db did not know it (restored "
        "from an older backup?)"
    )
    if not known:
        detail += "; its folder has no attempt.json: its GPUs and start are not known"
    running = _begun(engine, job, attempt, detail)
    if take.superseded:
        requeue_ended(engine, running, ran.ended, ran.ended_at, f"{then} since")
    else:
        finish(engine, running, ran.ended, ran.ended_at, now)


def _attempt(engine: Engine, job: Job, run: Ran | Found, started: float) -> Attempt:
    """The database's record of an attempt found in its folder, begun at `started`."""
    return Attempt(
        job.id,
        run.attempt,
        run.gpus or (),
        run.gpu_uuids,
        run.folder,
        run.host or engine.host,
        started,
        pid=run.pid,
        mem=job.spec.mem,
    )


def _begun(engine: Engine, job: Job, attempt: Attempt, detail: str) -> Job:
    """Record `attempt`, found in its folder, as the job's, begun (said in `detail`, in the
    job's events and the daemon's log): the job as it is now, running it."""
    engine.store.add_attempt(attempt)
    engine.move(
        job,
        Event.START,
        JobState.RUNNING,
        detail=detail,
        attempt=attempt.number,
        started_at=attempt.started_at,
        ended_at=None,
        assigned=attempt.gpus,
        pid=attempt.pid,
        outcome=None,
        release_at=None,
    )
    log.warning("job %d: %s", job.id, detail)
    return replace(
        job,
        state=JobState.RUNNING,
        attempt=attempt.number,
        gpus=attempt.gpus,
        pid=attempt.pid,
        started_at=attempt.started_at,
        ended_at=None,
        outcome=None,
        stop=None,
    )


def requeue_ended(engine: Engine, job: Job, ended: Ended, ended_at: float, then: str) -> None:
    """Record how the job's attempt ended and queue the job: a later attempt of it ran or
    runs (`then` says which), so it passes through no final state."""
    tail = jobfiles.tail(engine.layout.attempt_dir(job, job.attempt) / "stderr.log")
    outcome = classify(ended, tail)
    engine.store.update_attempt(job.id, job.attempt, ended_at=ended_at, outcome=outcome)
    detail = f"attempt {job.attempt} ended ({outcome.describe()}), and {then}"
    engine.move(
        job,
        Event.RETRY,
        JobState.QUEUED,
        detail=detail,
        ended_at=ended_at,
        outcome=outcome,
        stop_reason=None,
    )


def _adopt(engine: Engine, job: Job, found: Found, now: float) -> None:
    gpus = found.gpus or ()
    said = job.state.value
    job = _to_queue(engine, job, f"attempt {found.attempt} runs")
    started = found.started_at if found.started_at is not None else now
    attempt = _attempt(engine, job, found, started)
    detail = (
        f"adopted attempt {found.attempt} (pid {found.pid}) on {_on(gpus)}: it runs, but "
        f"herd.db said {said} (restored from an older backup?)"
    )
    running = _begun(engine, job, attempt, detail)
    engine.attempts.adopt(running, attempt, now)


def _hold(engine: Engine, job: Job, found: Found, why: str, now: float) -> None:
    """Hold the job, numbered past the found attempt: a release starts the next one, in a
    folder of its own. The found attempt, which the database does not know (it records no
    attempt row), runs on, its GPUs reserved for it until it ends: as its folder recorded
    them, else as its process was given them (its environment)."""
    gpus = found.gpus if found.gpus is not None else engine.executor.given_gpus(found.pid)
    reserved = (
        f"its {_on(gpus)} stays reserved for it until it ends"
        if gpus
        else "it uses no GPU"
        if gpus is not None
        else "its GPUs are not known, so none is reserved for it"
    )
    detail = (
        f"{unwatched(found.attempt, found.pid)}, but herd.db did not know it (restored from "
        f"an older backup?), and it cannot be adopted: {why}; {reserved}. Held so that it "
        f"does not run twice: once that process has ended, `gpuherd release {job.id}` runs "
        f"the job again; `gpuherd kill {job.id}` cancels it"
    )
    changes: dict[str, Any] = {"attempt": found.attempt, "release_at": None, "assigned": gpus or ()}
    if job.state is JobState.HELD:
        engine.store.update_job(job.id, now, Event.HOLD.value, detail=detail, **changes)
    else:  # queued; or finished, and retried since the backup
        event = Event.HOLD if job.state is JobState.QUEUED else Event.RETRY_HELD
        engine.move(job, event, JobState.HELD, detail=detail, ended_at=None, **changes)
    log.warning("job %d: %s", job.id, detail)
    held = replace(job, attempt=found.attempt)
    _reserve(engine, held, found.attempt, found.pid, gpus or ())


def reserve_held_runs(engine: Engine) -> None:
    """Reserve again the GPUs of the held jobs whose unwatched run (named by their hold, as
    `_hold` held them, by an earlier daemon) still runs."""
    held = engine.store.attempt_folders((JobState.HELD.value,))
    ids = [job_id for job_id, attempt, _ in held if attempt]  # (not `submit --hold`'s, unrun)
    runs = {
        job_id: run
        for job_id, detail in engine.store.hold_details(ids).items()
        if (run := unwatched_run(detail))
    }
    for job in engine.store.get_jobs(list(runs)).values():
        attempt, pid = runs[job.id]
        folder = str(engine.layout.attempt_dir(job, attempt))
        key = engine.layout.attempt_key(job.id, attempt)
        if job.attempt == attempt and engine.executor.is_running(pid, job.id, attempt, key, folder):
            _reserve(engine, job, attempt, pid, job.gpus)


def _reserve(engine: Engine, job: Job, attempt: int, pid: int, gpus: tuple[int, ...]) -> None:
    """Reserve for the run what it holds: `gpus`; a CPU-only job's, a CPU job's place (none
    where the GPUs of a job that asked for some are not known)."""
    if not gpus and job.spec.gpus:
        return
    if (known := engine.attempts.held_runs.get(job.id)) and known.pid == pid:
        return  # reserved already (by this start's first pass): watched once
    run = HeldRun(
        job.id,
        attempt,
        pid,
        reservation(job, gpus),
        str(engine.layout.attempt_dir(job, attempt)),
        str(engine.layout.job_dir(job)),
    )
    engine.attempts.reserve_for(run, lambda status: _run_ended(engine, run, status))


def _run_ended(engine: Engine, run: HeldRun, status: ExitStatus) -> None:
    """A held job's unwatched run has ended: its GPUs are free for the queue again."""
    if engine.attempts.held_runs.get(run.job_id) is not run:
        return
    del engine.attempts.held_runs[run.job_id]
    engine.wake()
    outcome = classify(Ended(status.exit_code, status.signal))
    detail = (
        f"attempt {run.attempt} (pid {run.pid}), which ran unwatched, has ended "
        f"({outcome.describe()}): {_on(run.reservation.gpus)} free again"
    )
    log.info("job %d: %s", run.job_id, detail)
    try:
        job = engine.store.get_job(run.job_id)
        if job is None or job.state is not JobState.HELD or job.attempt != run.attempt:
            return  # released or cancelled meanwhile: its state says the rest
        detail += f"; `gpuherd release {job.id}` runs the job again"
        engine.store.update_job(job.id, engine.clock(), UNWATCHED_ENDED, detail=detail, assigned=())
    except sqlite3.Error as exc:  # the GPUs are free all the same; only the note is missing
        log.warning("job %d: recording that its unwatched run ended failed: %s", run.job_id, exc)
        return
    engine.publish(
        {"id": job.id, "state": job.state.value, "event": UNWATCHED_ENDED, "detail": detail}
    )
