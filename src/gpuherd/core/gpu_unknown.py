"""GPUs an `--only-gpus` names that gpuherd does not have (pure): a warning, not a refusal.

A job whose --only-gpus names no GPU gpuherd has (or too few for its --gpus) is refused
(core/reasons.never_fits). One that names some it has and some it has not was accepted
without a word: `--only-gpus 0,5` on GPUs 0-3 ran on GPU 0 alone, and a typo went unseen.
It is accepted still (`gpuherd gpus add 5` may add that GPU later), with a warning that
names the `gpus add` of each such GPU the probe sees, and says the others are not here:
not on this machine, or, where jobs run on a Ray cluster, on no node of the cluster (it
said "not on this machine" there too, of a machine that has none of the cluster's GPUs).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gpuherd.core.naming import gpu_names, gpus_named, jobs_named, listed, only_flag


def unknown_only_gpus(
    jobs: Sequence[tuple[int, Sequence[int]]],
    configured: Collection[int],
    seen: Collection[int] = (),
    cluster: bool = False,
) -> list[str]:
    """One warning per --only-gpus naming GPUs gpuherd does not have (not `configured`;
    configured GPUs the probe does not see now count: they may come back), for the jobs
    (id, their only_gpus) that give it: `jobs 3-5: --only-gpus 0,5 names GPU 5, which is
    not configured (configured: 0,1,2,3): the jobs run only on GPU 0 until GPU 5 is added
    (gpuherd gpus add 5)`, where the probe sees GPU 5 (`seen`: the GPUs it sees that
    gpuherd does not use). `cluster`: the GPUs are a Ray cluster's (unknown_said). Nothing
    for a job without --only-gpus."""
    by_only: dict[tuple[int, ...], list[int]] = {}
    for job_id, only in jobs:
        if any(index not in configured for index in only):
            by_only.setdefault(tuple(sorted(set(only))), []).append(job_id)
    return [
        f"{jobs_named(ids)}: {unknown_said(only, configured, len(ids) > 1, seen, cluster)}"
        for only, ids in by_only.items()
    ]


def unknown_said(
    only: Sequence[int],
    configured: Collection[int],
    several: bool = False,
    seen: Collection[int] = (),
    cluster: bool = False,
) -> str:
    """What unknown_only_gpus says of one --only-gpus (`several`: of more than one job).
    Only the GPUs the probe sees (`seen`) get a `gpus add`, each of them (it named the first
    alone, and for GPUs no probe sees, where it fails); the others are said not to be here:
    on this machine, or (`cluster`) on any node of the Ray cluster the jobs run on."""
    absent = [index for index in only if index not in configured]
    addable = [index for index in absent if index in seen]
    nowhere = [index for index in absent if index not in seen]
    there = [index for index in only if index in configured]
    have = ",".join(map(str, sorted(configured))) or "none"  # as `gpus drain 9` lists them
    runs = "the jobs run" if several else "the job runs"
    # (none there: refused before, as never_fits says; worded all the same)
    on = f"{runs} only on {gpus_named(there)}" if there else f"{runs} on none"
    which = "which is" if len(absent) == 1 else "which are"
    said = (
        f"{only_flag(only)} names {gpus_named(absent)}, {which} not configured (configured: {have})"
    )
    away = _away(nowhere, cluster)
    if not addable:  # none can be added: nothing to wait for
        return f"{said} and {away}: {on}"
    first, *rest = addable
    adds = f"gpuherd gpus add {first}" + (
        f", then the same for {listed(rest, ', ')}" if rest else ""
    )
    said += f": {on} until {gpu_names(addable, ('is', 'are'))} added ({adds})"
    if nowhere:
        said += f"; {gpu_names(nowhere, ('is', 'are'))} {away}"
    return said


def _away(indices: Sequence[int], cluster: bool) -> str:
    """Where GPUs that no probe sees are not: `not on this machine (the probe does not see
    it)`, or on a Ray cluster, whose GPUs are on its nodes, not on the daemon's machine."""
    if cluster:
        return f"not in the Ray cluster (no node of it has {_it(indices)} now)"
    return f"not on this machine (the probe does not see {_it(indices)})"


def _it(indices: Sequence[int]) -> str:
    return "it" if len(indices) == 1 else "them"
