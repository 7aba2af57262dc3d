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


@dataclass(frozen=True)
class Reattach:
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


Action = Reattach | Finish | Unstart


def reconcile(live: list[Job], observed: dict[int, Observed]) -> list[Action]:
    actions: list[Action] = []
    for job in live:
        seen = observed.get(job.id, Observed(pid=None, running=False))
        if seen.recorded:
            actions.append(Finish(job.id, seen.exit_code, seen.signal, seen.ended_at))
        elif seen.running and seen.pid is not None:
            actions.append(Reattach(job.id, seen.pid))
        elif seen.pid is None:
            actions.append(Unstart(job.id))
        else:
            actions.append(Finish(job.id, None, None, seen.ended_at))
    return actions
