"""GPUs an `--only-gpus` names that gpuherd does not have (pure): a warning, not a refusal.

A job whose --only-gpus names no GPU gpuherd has (or too few for its --gpus) is refused
(core/reasons.never_fits). One that names some it has and some it has not was accepted
without a word: `--only-gpus 0,5` on GPUs 0-3 ran on GPU 0 alone, and a typo went unseen.
It is accepted still (`gpuherd gpus add 5` may add that GPU later), with a warning.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gpuherd.core.naming import gpus_named, jobs_named, only_flag


def unknown_only_gpus(
    jobs: Sequence[tuple[int, Sequence[int]]], configured: Collection[int]
) -> list[str]:
    """One warning per --only-gpus naming GPUs gpuherd does not have (not `configured`;
    configured GPUs the probe does not see now count: they may come back), for the jobs
    (id, their only_gpus) that give it: `jobs 3-5: --only-gpus 0,5 names GPU 5, which is
    not configured (configured: 0,1,2,3): the jobs run only on GPU 0 until GPU 5 is added
    (gpuherd gpus add 5)`. Nothing for a job without --only-gpus."""
    by_only: dict[tuple[int, ...], list[int]] = {}
    for job_id, only in jobs:
        if any(index not in configured for index in only):
            by_only.setdefault(tuple(sorted(set(only))), []).append(job_id)
    return [
        f"{jobs_named(ids)}: {unknown_said(only, configured, len(ids) > 1)}"
        for only, ids in by_only.items()
    ]


def unknown_said(only: Sequence[int], configured: Collection[int], several: bool = False) -> str:
    """What unknown_only_gpus says of one --only-gpus (`several`: of more than one job)."""
    absent = [index for index in only if index not in configured]
    there = [index for index in only if index in configured]
    have = ",".join(map(str, sorted(configured))) or "none"  # as `gpus drain 9` lists them
    one, named = len(absent) == 1, gpus_named(absent)
    runs = "the jobs run" if several else "the job runs"
    # (none there: refused before, as never_fits says; worded all the same)
    on = f"{runs} only on {gpus_named(there)}" if there else f"{runs} on none"
    return (
        f"{only_flag(only)} names {named}, which {'is' if one else 'are'} not configured "
        f"(configured: {have}): {on} until {named} {'is' if one else 'are'} added "
        f"(gpuherd gpus add {absent[0]})"
    )
