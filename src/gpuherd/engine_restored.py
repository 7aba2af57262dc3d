"""A herd.db restored from an older backup: attempts that ran, or run, while it did not know.

The database may say a job is queued, held, runs an earlier attempt, or finished (a `retry`
came after the backup), while later attempts of it ran since: their folders record them. A
restart takes them as the job's own (docs/reliability.md, section 24): one that ended is
recorded as it ended (its exit status, GPUs and times from its folder, engine_taken.py),
and the job's state follows from it, so a finished run never runs again; one that runs is
adopted on the GPUs its folder recorded, or, where it cannot be (GPUs unknown or taken), its
job is held for it, naming the process, with that process's GPUs reserved for it until it
ends (engine_held_runs.py); one that runs beside a later one (the job released while it
ran) is watched the same way, its GPUs reserved, but the job is not held for it. The
decisions are the pure core's (`core.recovery`: catch_up, take_over); this reads the
folders and applies them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpuherd.attempt_numbers import ran_there
from gpuherd.core.model import Job
from gpuherd.core.recovery import Adopt, CatchUp, Found, Ran, catch_up, take_over
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.engine_held_runs import hold, watch_aside
from gpuherd.engine_taken import attempt_row, begun, ended_run, found_run, on_gpus, take, to_queue
from gpuherd.layout import attempt_path

if TYPE_CHECKING:
    from gpuherd.engine import Engine

_NOT_LIVE = tuple(s.value for s in (JobState.QUEUED, JobState.HELD, *sorted(FINISHED_STATES)))
"""The jobs whose later attempts are taken (`take_later`)."""


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
        return found_run(number, pid, folder)
    if not ran_there(executor, folder, job.id):  # another job's (a sweep point run again)
        return None
    status = executor.recorded_exit(folder)
    return ended_run(number, pid, folder, status, now, executor.signs_of_life(folder))


def take_later(engine: Engine, later: dict[int, CatchUp], now: float) -> None:
    """Take the later attempts of each queued, held or finished job (those in `later`, whose
    own attempt a restart found superseded, too): watch those that run beside a later one,
    record the ended ones, then adopt, or else hold, the latest ones that run. Those aside
    are watched first: their GPUs count as taken when the latest are adopted."""
    waiting = [
        (job, plan)
        for job in _with_later_folder(engine, later)
        if (plan := later.get(job.id) or later_runs(engine, job, now))
    ]
    for job, plan in waiting:
        for found in plan.aside:
            watch_aside(engine, job, found, plan.latest(), now)
        for i, taken in enumerate(plan.takes):
            then = CatchUp(plan.takes[i + 1 :], plan.runs).first()
            take(engine, engine.store.get_job(job.id) or job, taken, then, now)
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
            hold(engine, job, found, decision.why, now)


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


def _adopt(engine: Engine, job: Job, found: Found, now: float) -> None:
    gpus = found.gpus or ()
    said = job.state.value
    job = to_queue(engine, job, f"attempt {found.attempt} runs")
    started = found.started_at if found.started_at is not None else now
    attempt = attempt_row(engine, job, found, started)
    detail = (
        f"adopted attempt {found.attempt} (pid {found.pid}) on {on_gpus(gpus)}: it runs, but "
        f"herd.db said {said} (restored from an older backup?)"
    )
    running = begun(engine, job, attempt, detail)
    # Its --timeout from the clock now, as a re-attached job's (engine_recovery._reattach).
    engine.attempts.adopt(running, attempt, engine.clock())
