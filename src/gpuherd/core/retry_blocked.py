"""What is said of a chain of jobs a `retry` must run again (pure): the ids it names, and why
one of the jobs a retry must run again ahead of a job (core/lifecycle.Rerun) is refused by
`retry` itself, as it waits for a job removed since, or as a newer run of its sweep point
took its folder. The hint "retry both (gpuherd retry 2 3)" was given anyway, and refused for
job 2 in turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuherd.core.idspec import format_ids, said_ids
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
    newer_gone: bool = False
    """That job is no longer in the queue (removed since, or herd.db restored from an older
    backup); its run is the one the point's folder holds."""
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
    if blocked.newer_gone:
        return f"{head}: it is an older run of {point}, {_holds(newer)}"
    return f"{head}: it is an older run of {point}, and job {newer} ran that point since"


def point_of(job: Job) -> str:
    """The sweep point a job runs, as said: its name (`cs/x=2`), else its folder."""
    return job.spec.name or str(job.spec.folder)


def older_run(job: Job, newer: int, gone: bool = False) -> str:
    """Why `retry` of an older run of a sweep point is refused: its folder is job `newer`'s
    now, and a retry would run the point twice in it. `gone`: job `newer` is no longer in the
    queue (`clean --state succeeded` of the rerun that succeeded): the sweep's resubmission,
    which judges the point by its folder, runs it again if it should; the retry ran it again
    whatever that run did, moving it aside."""
    if gone:
        return (
            f"job {job.id} is an older run of {point_of(job)}: {_holds(newer)}; to run the "
            "point again, submit the sweep again (it skips the points done, reruns the "
            "failed ones)"
        )
    return (
        f"job {job.id} is an older run of {point_of(job)}: job {newer} ran that point since "
        f"(retry job {newer} if it should run again)"
    )


def _holds(newer: int) -> str:
    return (
        f"its folder holds the run of job {newer}, which ran that point after it and is no "
        "longer in the queue"
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
    if blocked.newer and not blocked.newer_gone:
        instead = f", waiting for job {blocked.newer[1]} in place of job {blocked.job_id}"
    return f"submit {named} again{instead} ({shows})"


def retried_ids(ahead: Sequence[int], job_ids: Sequence[int]) -> str:
    """The ids a `retry` that runs a chain again takes: `ahead` (the jobs first waited for
    first), then `job_ids`. Up to FEW one by one (`18 19 20`, `5 8-9`); more with each run of
    consecutive ids in that order as a range: a failed chain of 400 jobs was told `gpuherd
    retry 100 101 ... 499`, a line of 1.7 KB, for `gpuherd retry 100-499`."""
    if len(ahead) + len(job_ids) <= FEW:
        return " ".join([*(str(i) for i in ahead), format_ids(job_ids)])
    runs: list[list[int]] = []
    for i in [*ahead, *sorted(job_ids)]:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return " ".join(format_ids(run) for run in runs)
