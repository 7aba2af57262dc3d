"""After a daemon restart: what to do with each job the database says is live (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuherd.core.model import Job


@dataclass(frozen=True)
class Observed:
    """What the restarted daemon found of one live job's attempt."""

    pid: int | None
    """From the database, or else from the pid file the job wrote when it started."""
    running: bool
    """`pid` is alive and is this attempt of this job (not a reused pid)."""
    exit_code: int | None = None
    signal: int | None = None
    recorded: bool = False
    """An exit status was recorded in the attempt's folder."""
    ended_at: float | None = None
    outlived: bool = False
    """`pid` has ended (no process has that number now), but processes of its attempt (its
    group, its attempt key) still run: what the job started, still saving after a SIGTERM.
    Looked for only in a job being stopped."""


@dataclass(frozen=True)
class Reattach:
    job_id: int
    pid: int


@dataclass(frozen=True)
class Drain:
    """The job was being stopped and its leader has ended, but the processes it started still
    run within the stop's grace period: the job stays running until they end or the grace
    runs out (then they are killed), as if no restart had come between."""

    job_id: int
    pid: int


@dataclass(frozen=True)
class Finish:
    """The job ended while no daemon watched; `exit_code`/`signal` both None = lost."""

    job_id: int
    exit_code: int | None
    signal: int | None
    ended_at: float | None


@dataclass(frozen=True)
class Unstart:
    """The daemon died between recording the start and spawning: nothing ran, queue it again."""

    job_id: int


Action = Reattach | Drain | Finish | Unstart


def reconcile(live: list[Job], observed: dict[int, Observed], now: float) -> list[Action]:
    actions: list[Action] = []
    for job in live:
        seen = observed.get(job.id, Observed(pid=None, running=False))
        if seen.outlived and seen.pid is not None and in_grace(job, now):
            actions.append(Drain(job.id, seen.pid))
        elif seen.recorded:
            actions.append(Finish(job.id, seen.exit_code, seen.signal, seen.ended_at))
        elif seen.running and seen.pid is not None:
            actions.append(Reattach(job.id, seen.pid))
        elif seen.pid is None:
            actions.append(Unstart(job.id))
        else:
            actions.append(Finish(job.id, None, None, seen.ended_at))
    return actions


def in_grace(job: Job, now: float) -> bool:
    """The job is being stopped and the SIGKILL its stop has due is still to come."""
    return job.stop is not None and now < kill_due(job)


def kill_due(job: Job) -> float:
    """When the stop of `job` (which has one) has its SIGKILL due: the stored stop time is
    set so that this holds however often (and with whatever --grace) the stop was asked."""
    assert job.stop is not None
    return job.stop.at + job.spec.grace
