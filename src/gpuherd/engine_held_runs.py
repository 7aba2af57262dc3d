"""Runs of a job that herd.db did not know (restored from an older backup), found running by
a restart where they could not be adopted: the job is held for each (docs/reliability.md,
section 24); and those found running beside a later attempt of the job, which decides it:
watched the same way, the job not held for them (`watch_aside`).

Such a run is watched until it ends, its GPUs reserved for it meanwhile (where known), as
a running attempt's are, whatever its job's state: a job released or cancelled while the
run runs does not free them, nor does a restart, which finds these runs again by the hold
events that named them. When the run ends (or a restart finds it ended), it is recorded as
the attempt it was; while the job is still held for it, the job's state follows from its
end, as from an attempt a daemon watched (core.recovery.run_decides).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd import log_text
from gpuherd.core.lifecycle import PUT_BACK, classify
from gpuherd.core.model import Job
from gpuherd.core.recovery import (
    Found,
    Ran,
    Take,
    reservation,
    run_decides,
    running_unwatched,
    unwatched,
    unwatched_run,
)
from gpuherd.core.states import Event, JobState
from gpuherd.engine_taken import attempt_row, ended_run, found_run, on_gpus, take
from gpuherd.executors.base import ExitStatus
from gpuherd.gpu_processes import RunKey
from gpuherd.held_run import HeldRun

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

UNWATCHED_ENDED = "unwatched-ended"
"""The event of a job, released or cancelled while a run it was held for ran, once that run
has ended: recorded as an attempt of the job, its GPUs free again."""
HELD_FOR_IT = "the job was held for it while it ran unwatched (herd.db did not know it)"
"""How the `start` event of a run taken as its held job's attempt says where it comes from."""
REMOVED_NOW = (
    "(removed now, a restart would no longer know the run, and would give its GPUs to other "
    "jobs while it runs)"
)
"""Why the removal of a job whose held run runs waits: the run is found again by a restart
only through the job's hold event, which the removal deletes (with the job's folder, the
run's own)."""


def hold(engine: Engine, job: Job, found: Found, why: str, now: float) -> None:
    """Hold the job, numbered past the found attempt: a release starts the next one, in a
    folder of its own. The found attempt, which the database does not know (it records no
    attempt row until it ends), runs on, watched, its GPUs reserved for it until it ends."""
    gpus, reserved = _its_gpus(engine, found)
    detail = (
        f"{unwatched(found.attempt, found.pid)}, but herd.db did not know it (restored from "
        f"an older backup?), and it cannot be adopted: {why}; {reserved}. Held so that it "
        "does not run twice: when that process ends, the job goes on from how it ended, as "
        f"from an attempt a daemon watched; `gpuherd release {job.id}` runs the job again "
        f"without waiting for it, `gpuherd kill {job.id}` cancels the job"
    )
    changes: dict[str, Any] = {"attempt": found.attempt, "release_at": None, "assigned": gpus or ()}
    if job.state is JobState.HELD:
        engine.store.update_job(job.id, now, Event.HOLD.value, detail=detail, **changes)
    else:  # queued; or finished, and retried since the backup
        event = Event.HOLD if job.state is JobState.QUEUED else Event.RETRY_HELD
        # (a finished one keeps no end of its own: its run's attempt has it, as a retry's)
        engine.move(job, event, JobState.HELD, detail=detail, **PUT_BACK, **changes)
    log.warning("job %d: %s", job.id, detail)
    _watch(engine, job, found, gpus)


def watch_aside(engine: Engine, job: Job, found: Found, latest: int, now: float) -> None:
    """Watch a run of the job that herd.db did not know, found running beside a later attempt
    of the job (`latest`), which decides the job (core.recovery.CatchUp.aside): the job is
    not held for it, but its GPUs stay reserved for it until it ends, when it is recorded as
    an attempt of the job, and no more (run_decides). A `hold` event names it, the job's
    state unchanged: by it a restart finds the run again (`watch_held_runs`). Written before
    the latest attempt is taken (take_later), it is never the hold that the latest's own, if
    the job is held for that one, would have to follow."""
    gpus, reserved = _its_gpus(engine, found)
    detail = (
        f"{unwatched(found.attempt, found.pid)}, but herd.db did not know it (restored from "
        f"an older backup?), and attempt {latest} of the job started since: this one is not "
        f"the job's run (released while it ran?), and the job is not held for it; {reserved}, "
        f"and its end is recorded as attempt {found.attempt} of the job, not as its result"
    )
    engine.store.update_job(job.id, now, Event.HOLD.value, detail=detail)
    log.warning("job %d: %s", job.id, detail)
    _watch(engine, job, found, gpus)


def _its_gpus(engine: Engine, found: Found) -> tuple[tuple[int, ...] | None, str]:
    """The GPUs of a run found running (None: not known), as its folder recorded them, else as
    its process was given them (its environment); and what its hold says of them."""
    gpus = found.gpus if found.gpus is not None else engine.executor.given_gpus(found.pid)
    reserved = (
        f"its {on_gpus(gpus)} stays reserved for it until it ends"
        if gpus
        else "it uses no GPU"
        if gpus is not None
        else "its GPUs are not known, so none is reserved for it"
    )
    return gpus, reserved


def removal_refused(engine: Engine, job: Job) -> str | None:
    """Why `rm` of the job must wait, while a run it was held for runs (REMOVED_NOW); None
    when no such run runs."""
    run = held_run_running(engine, job)
    if run is None:
        return None
    pid = engine.attempts.held_runs_of(job.id)[0].pid
    # (Its process group: the pid is the job's shell, which acts on a SIGTERM only once its
    # command has ended.)
    end = f"end it (kill -TERM -{pid}: its whole process group)"
    return f"{run}: {end} or wait for it to end, then remove the job {REMOVED_NOW}"


def held_run_running(engine: Engine, job: Job) -> str | None:
    """`job 5: its attempt 1 runs unwatched (pid 4242), GPU 0 reserved for it`, while a run
    the job was held for runs; None when none does."""
    runs = engine.attempts.held_runs_of(job.id)
    if not runs:
        return None
    run = runs[0]
    gpus = run.reservation.gpus if run.reservation else ()
    kept = f", {on_gpus(gpus)} reserved for it" if gpus else ""
    return f"job {job.id}: its {running_unwatched(run.attempt, run.pid)}{kept}"


def watch_held_runs(engine: Engine, now: float) -> None:
    """At a start: watch again every run a hold named (`hold`, by an earlier daemon) whose
    end is not recorded, whatever its job's state now, its GPUs reserved; record the end of
    each that ended while no daemon ran."""
    named = {  # a set: a job held again by a later restart names its run twice
        (job_id, *run)
        for job_id, detail in engine.store.unwatched_holds()
        if (run := unwatched_run(detail))
    }
    for job_id, attempt, pid in sorted(named):
        job = engine.store.get_job(job_id)
        if job is None or engine.store.attempt_known(job_id, attempt):
            continue  # its end is recorded: the attempt has its row
        folder = str(engine.layout.attempt_dir(job, attempt))
        key = engine.layout.attempt_key(job_id, attempt)
        if engine.executor.is_running(pid, job_id, attempt, key, folder):
            found = found_run(attempt, pid, folder)
            _watch(engine, job, found, _its_gpus(engine, found)[0])
        else:
            executor = engine.executor
            status, signs = executor.recorded_exit(folder), executor.signs_of_life(folder)
            ended = ended_run(attempt, pid, folder, status, now, signs)
            _record_end(engine, job_id, ended, now)


def _watch(engine: Engine, job: Job, found: Found, gpus: tuple[int, ...] | None) -> None:
    """Watch the run until it ends, and reserve what it holds meanwhile: `gpuherd gpus`
    lists it on its GPUs; a CPU-only job's holds a CPU job's place; where the GPUs of a job
    that asked for some are not known (None, or none in its environment), nothing."""
    attempt, pid = found.attempt, found.pid
    if (known := engine.attempts.held_runs.get((job.id, attempt))) and known.pid == pid:
        return  # watched already (by this start's first pass)
    held = None
    if gpus is not None and (gpus or not job.spec.gpus):
        held = replace(reservation(job, gpus), run=running_unwatched(attempt, pid))
    run = HeldRun(
        job.id,
        attempt,
        pid,
        held,
        str(engine.layout.attempt_dir(job, attempt)),
        str(engine.layout.job_dir(job)),
        gpus or (),
        found.started_at,
        sweep=job.spec.sweep,
    )
    engine.attempts.reserve_for(run, lambda status: _run_ended(engine, run, status))


def _run_ended(engine: Engine, run: HeldRun, status: ExitStatus) -> None:
    """A run that its job was held for has ended: its GPUs are free for the queue again, and
    its end, as the daemon saw it, waits for the engine's next tick to record it
    (`record_held_ends`)."""
    if engine.attempts.held_runs.get(run.key) is not run:
        return
    del engine.attempts.held_runs[run.key]
    ended = ended_run(run.attempt, run.pid, run.folder, status, engine.clock())
    ended = replace(ended, peak=run.peak)  # recorded with its attempt, as a watched one's is
    if ended.started_at is None:  # no attempt.json: its GPUs and start as seen while it ran
        ended = replace(ended, gpus=run.gpus, started_at=run.started_at)
    engine.attempts.held_ends[run.key] = ended
    engine.wake()


def record_held_ends(engine: Engine, now: float) -> None:
    """Record the ends of held runs that `_run_ended` keeps, in the tick's transaction: each
    is forgotten once committed. Where the database fails (a full disk, herd.db locked), the
    tick keeps them with its exits and tries again (RETRY_RECORDING, engine_unspawned.py): the
    exit status the daemon saw is recorded, where a restart would read the run's folder, whose
    `process` file may lack it (a full disk), and record the run `lost`."""
    pending = engine.attempts.held_ends
    for run, ended in sorted(pending.items()):  # a job's earlier run first: as they ran
        _record_end(engine, run[0], ended, now)
        engine.store.after_commit(partial(_forget, pending, run, ended))


def _forget(pending: dict[RunKey, Ran], run: RunKey, ended: Ran) -> None:
    if pending.get(run) is ended:
        del pending[run]


def _record_end(engine: Engine, job_id: int, ran: Ran, now: float) -> None:
    """Record the ended run: as the job's attempt, from which its state follows, while the job
    is still held for it; else as an attempt of the job, and no more (run_decides)."""
    job = engine.store.get_job(job_id)
    if job is None:
        return  # removed meanwhile, with the hold that named the run
    ended = f"attempt {ran.attempt} (pid {ran.pid}), which ran unwatched, has ended"
    latest = engine.store.hold_details([job.id]).get(job.id)
    if run_decides(job.state, latest, (ran.attempt, ran.pid)):
        done = Take(job.id, ran, superseded=False)
        take(engine, job, done, "", now, story=HELD_FOR_IT, queued=ended)
        return
    tail = log_text.tail(Path(ran.folder) / "stderr.log") if ran.exit_code else ""
    outcome = classify(ran.ended, tail)
    started = ran.started_at if ran.started_at is not None else ran.ended_at
    engine.store.add_attempt(attempt_row(engine, job, ran, started))
    engine.store.update_attempt(
        job.id, ran.attempt, ended_at=ran.ended_at, outcome=outcome, peak_mem=ran.peak or None
    )
    detail = (
        f"{ended} ({outcome.describe()}): recorded as attempt {ran.attempt}, not as the job's "
        f"result: the job was released or cancelled while it ran (its state: {job.state.value})"
    )
    engine.store.update_job(job.id, now, UNWATCHED_ENDED, detail=detail)
    log.info("job %d: %s", job.id, detail)
    change: dict[str, object] = {"id": job.id, "state": job.state.value, "detail": detail}
    engine.publish({**change, "event": UNWATCHED_ENDED})
