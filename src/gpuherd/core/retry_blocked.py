"""What is said of a chain of jobs a `retry` cannot run again (pure): one of the jobs a retry
must run again ahead of a job (core/lifecycle.Rerun) is refused by `retry` itself, as it
waits for a job removed since, or as a newer run of its sweep point took its folder. The
hint "retry both (gpuherd retry 2 3)" was given anyway, and refused for job 2 in turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuherd.core.idspec import said_ids
from gpuherd.core.model import Job

FEW = 4
"""Jobs named one by one ("jobs 2, 3 and 5"); more as ranges ("jobs 2-9, 12")."""


@dataclass(frozen=True)
class Blocked:
    """The first job of a chain that `retry` refuses, why, and what is submitted again."""

    job_id: int
    removed: tuple[int, str] | None = None
    """It waits for this job (by this option, `--after`), removed since (`gpuherd rm`)."""
    newer: tuple[str, int] | None = None
    """It is an older run of this sweep point (`cs/x=2`): this job ran that point since."""
    again: tuple[int, ...] = ()
    """The jobs of the chain to submit again (the job retried is added by who asks): it, if
    removed; those waiting for it through the chain."""


def blocked_said(blocked: Blocked) -> str:
    """`job 2 cannot be retried: it waits for job 1 (--after), which was removed since`."""
    head = f"job {blocked.job_id} cannot be retried"
    if blocked.removed:
        dep, kind = blocked.removed
        return f"{head}: it waits for job {dep} ({kind}), which was removed since"
    assert blocked.newer  # (one of the two is set)
    point, newer = blocked.newer
    return f"{head}: it is an older run of {point}, and job {newer} ran that point since"


def point_of(job: Job) -> str:
    """The sweep point a job runs, as said: its name (`cs/x=2`), else its folder."""
    return job.spec.name or str(job.spec.folder)


def older_run(job: Job, newer: int) -> str:
    """Why `retry` of an older run of a sweep point is refused: its folder is job `newer`'s
    now, and a retry would run the point twice in it."""
    return (
        f"job {job.id} is an older run of {point_of(job)}: job {newer} ran that point since "
        f"(retry job {newer} if it should run again)"
    )


def submit_again(blocked: Blocked, job_ids: Sequence[int]) -> str:
    """What to do instead: submit the jobs of the chain again (the ones of `job_ids` too),
    in place of the older run of a sweep point waiting for its newer one."""
    again = sorted({*blocked.again, *job_ids})
    if len(again) == 1:
        named, shows = f"job {again[0]}", f"its command: gpuherd show {again[0]}"
    else:
        few = len(again) <= FEW
        ids = f"{', '.join(map(str, again[:-1]))} and {again[-1]}" if few else said_ids(again)
        named, shows = f"jobs {ids}", "each one's command: gpuherd show ID"
    instead = ""
    if blocked.newer:
        instead = f", waiting for job {blocked.newer[1]} in place of job {blocked.job_id}"
    return f"submit {named} again{instead} ({shows})"
