"""Runs of a job that herd.db did not know (restored from an older backup), found in their
attempt folders: what a folder records of one, and how one is recorded as the job's attempt.

A restart takes the later attempts it finds (engine_restored.py); a held job's run that ends
is taken as the job's attempt too (engine_held_runs.py). Either way the attempt is recorded
as a watching daemon would have recorded it: its start, then its end, from which the job's
state follows (docs/reliability.md, section 24).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpuherd import jobfiles
from gpuherd.core.lifecycle import Ended, classify
from gpuherd.core.model import Attempt, HostUsage, Job
from gpuherd.core.recovery import Found, Ran, Take, back_to_queue, lost_end
from gpuherd.core.states import GPUHERD_STOPS, Event, JobState, OutcomeKind
from gpuherd.engine_endings import finish, stderr_tail
from gpuherd.executors.base import UNKNOWN_SIGNS, ExitStatus, SignsOfLife
from gpuherd.executors.local_outputs import linked_files
from gpuherd.executors.local_records import PROCESS_FILE

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

FOUND_ENDED = "it ran and ended while herd.db did not know it (restored from an older backup?)"
"""How a restart's `start` event says where an attempt taken from its folder comes from."""


def _started(info: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...], str, float]:
    """An attempt's GPUs, their UUIDs, host and start, as its attempt.json recorded them;
    ValueError, KeyError or TypeError where it does not."""
    gpus = tuple(int(i) for i in info["gpus"])
    uuids = tuple(str(u) for u in info.get("gpu_uuids") or ())
    return gpus, uuids, str(info["host"]), float(info["started_at"])


def found_run(number: int, pid: int, folder: str) -> Found:
    """What the folder of an attempt that runs recorded of its start: attempt.json, written
    a second after it (a daemon stopped sooner left none), else the process file's time."""
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


def ended_run(
    number: int,
    pid: int,
    folder: str,
    status: ExitStatus | None,
    now: float,
    signs: SignsOfLife = UNKNOWN_SIGNS,
) -> Ran:
    """How an ended attempt's folder recorded it: see core.recovery.Ran. With no `status`,
    it is lost: its end is its last sign of life, as far as `signs` tell (lost_end)."""
    info = jobfiles.attempt_info(folder) or {}
    try:
        started: float | None = _started(info)[3]
    except (ValueError, KeyError, TypeError):
        started = None
    if status is None:
        ended_at = lost_end(started, signs.last_seen, signs.booted, now)
    else:
        ended_at = status.ended_at
    ran = Ran(number, pid, folder, ended_at)
    if status is not None:
        ran = replace(ran, exit_code=status.exit_code, signal=status.signal)
    try:  # why it ended, as the daemon that watched its end wrote it (record_end)
        OutcomeKind(info["outcome"])  # (none: ended while no daemon watched)
        code, signal = info.get("exit_code"), info.get("signal")
        ran = replace(
            ran,
            ended_at=float(info["ended_at"]),
            exit_code=None if code is None else int(code),
            signal=None if signal is None else int(signal),
            stop_reason=recorded_stop(info)[0],  # (known from attempt.json alone)
        )
        ran = replace(ran, usage=recorded_usage(info))
    except (ValueError, KeyError, TypeError):
        pass  # ended while no daemon watched: the process file's status (or lost)
    try:
        gpus, uuids, host, started = _started(info)
    except (ValueError, KeyError, TypeError):
        return ran  # no attempt.json: its GPUs and start are not known
    return replace(ran, gpus=gpus, gpu_uuids=uuids, host=host, started_at=started)


def recorded_stop(info: Mapping[str, Any]) -> tuple[OutcomeKind | None, bool]:
    """The stop of gpuherd's (a kill, a --timeout, ...) that ended an attempt, and whether it
    queued the job again (a `retry` of it running), as the daemon that watched its end wrote
    them in its attempt.json (jobfiles.record_end); (None, False) for any other end, or none
    recorded."""
    outcome = info.get("outcome")
    stops = {kind.value: kind for kind in GPUHERD_STOPS}
    kind = stops.get(outcome) if isinstance(outcome, str) else None
    return kind, kind is not None and info.get("requeued") is True


def recorded_usage(info: Mapping[str, Any]) -> HostUsage | None:
    """The host usage an attempt.json's end records (jobfiles.record_end); None where it
    records none (not measured), or not as numbers."""
    peak, cpu = info.get("peak_rss"), info.get("cpu_time")
    if not isinstance(cpu, int | float) or not isinstance(peak, int | None):
        return None
    return HostUsage(peak, float(cpu))


def to_queue(engine: Engine, job: Job, detail: str) -> Job:
    """Put the job back in the queue (released or retried since the backup: say so)."""
    event = back_to_queue(job.state)
    if event is None:
        return job
    engine.move(job, event, JobState.QUEUED, detail=detail)
    return replace(job, state=JobState.QUEUED)


def on_gpus(gpus: tuple[int, ...]) -> str:
    return f"GPU {','.join(map(str, gpus))}" if gpus else "no GPU"


def take(
    engine: Engine,
    job: Job,
    take: Take,
    then: str,
    now: float,
    story: str = FOUND_ENDED,
    queued: str | None = None,
) -> None:
    """Record an attempt that ended while herd.db did not know it, as the watching daemon
    would have: its start, then its end, from which the job's state follows (or, where a
    later attempt ran, `then`, the job is queued for that one). `story` says where it comes
    from; `queued`, why a job that was not queued goes back to the queue first."""
    ran = take.ran
    job = to_queue(engine, job, queued or f"attempt {ran.attempt} ran")
    started = ran.started_at if ran.started_at is not None else ran.ended_at
    attempt = attempt_row(engine, job, ran, started)
    known = ran.started_at is not None  # else its folder has no attempt.json
    detail = (
        f"attempt {ran.attempt} (pid {ran.pid}){f' on {on_gpus(ran.gpus)}' if known else ''} "
        f"taken from its folder: {story}"
    )
    if not known:
        detail += "; its folder has no attempt.json: its GPUs and start are not known"
    running = begun(engine, job, attempt, detail)
    if take.superseded:
        requeue_ended(engine, running, ran.ended, ran.ended_at, f"{then} since", ran.usage)
    else:
        finish(engine, running, ran.ended, ran.ended_at, now, peak=ran.peak, usage=ran.usage)


def attempt_row(engine: Engine, job: Job, run: Ran | Found, started: float) -> Attempt:
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
        files=linked_files(run.folder),
    )


def begun(engine: Engine, job: Job, attempt: Attempt, detail: str) -> Job:
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


def requeue_ended(
    engine: Engine,
    job: Job,
    ended: Ended,
    ended_at: float,
    then: str,
    usage: HostUsage | None = None,
) -> None:
    """Record how the job's attempt ended (its host `usage` where its folder has it) and
    queue the job: a later attempt of it ran or runs (`then` says which), so it passes
    through no final state."""
    outcome = classify(ended, stderr_tail(engine, job))
    used = {"peak_rss": usage.peak_rss, "cpu_time": usage.cpu_time} if usage else {}
    engine.store.update_attempt(job.id, job.attempt, ended_at=ended_at, outcome=outcome, **used)
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
