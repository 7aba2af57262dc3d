"""What keeps the GPUs a queued job could use from it, GPUs grouped by cause (pure: no I/O):
the parenthesis of core/reasons.py's `waiting for a free GPU (...)`."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.capacity import (
    EXCLUSIVE,
    PLAIN,
    SHARING,
    Gpu,
    Kind,
    foreign_blocks,
    foreign_memory,
    margin,
)
from gpuherd.core.model import Device, DeviceState, Policy, Reservation
from gpuherd.core.naming import gpu_names, gpus_named, jobs_named, listed
from gpuherd.core.units import format_size

NAMED = 6
"""The numbers or ranges a group of GPUs is named by at most, then "and 26 more": every
other GPU of 64 busy with other users' processes, the rest full, made a reason of 370
characters (`gpuherd gpus` names each GPU's)."""

Cause = tuple[str, str]
"""A reason a GPU refuses a job: what follows the GPUs named, for one GPU and for several
(`GPU 0 has reached the limit of jobs set for it`, `GPUs 0, 1 have ... set for them`)."""


def _cause(verbs: tuple[str, str], one: str, several: str | None = None) -> Cause:
    """A Cause from its verbs (for one GPU, for several) and the words after them, which differ
    for several GPUs where they name them or their jobs (`several`): a singular tail after a
    plural verb said "GPUs 0, 1 have reached the limit of jobs set for it"."""
    return f"{verbs[0]} {one}", f"{verbs[1]} {one if several is None else several}"


_DRAINING = _cause(("is", "are"), "draining")
_FOREIGN = _cause(("is", "are"), "busy with other users' processes")
_FOREIGN_KEPT = _cause(("has", "have"), "other users' processes: config foreign exclusive")
"""What keeps a job with --mem off a GPU with other users' processes: only that setting."""
_EXCLUSIVE_JOB = _cause(("runs", "run"), "an exclusive job")
_LIMIT_SET = "reached the limit of jobs set for"
_LIMIT = _cause(("has", "have"), f"{_LIMIT_SET} it", f"{_LIMIT_SET} them")
_OWNED = _cause(("is", "are"), "taken by a job without --mem", "taken by jobs without --mem")


def _blocker(g: Gpu, kind: Kind, mem: int | None) -> Cause | None:
    """Why a GPU with room for the job by its own measure (slots or memory) refuses it."""
    if kind is EXCLUSIVE:
        return None  # "waiting for an empty GPU" says it; memory: `_outside_memory`
    free = g.free_mem
    sharing = kind is SHARING and free is not None
    if not (free is not None and free >= (mem or 0) if sharing else g.count < g.slots):
        return None
    if g.exclusive:
        return _EXCLUSIVE_JOB
    if g.max_jobs is not None and g.count >= g.max_jobs:
        return _LIMIT
    if sharing and g.plain and g.count >= g.slots:
        return _OWNED
    return None


def _foreign(d: Device, policy: Policy, sharing: bool) -> Cause | None:
    """Whether other users' processes keep the job off the GPU: `foreign` auto and exclusive
    keep a job without --mem off, only exclusive one that shares the GPU by memory."""
    plain_busy, share_busy = foreign_blocks(d, policy)
    if sharing:
        return _FOREIGN_KEPT if share_busy else None
    return _FOREIGN if plain_busy else None


def gpu_details(
    kind: Kind,
    mem: int | None,
    devices: Sequence[Device],
    gpus: list[Gpu],
    policy: Policy,
    reservations: Sequence[Reservation],
    beside: bool = False,
    enable: bool = False,
) -> list[str]:
    """What keeps GPUs that could otherwise take the job from it, GPUs grouped by cause, each
    group named in a few numbers or ranges at most (`NAMED`).

    GPUs full of gpuherd's own jobs are named only beside another cause, this function's or
    the caller's (`beside`: an --only-gpus GPU not there now): with none, `waiting for a free
    GPU` alone says it; beside one, leaving them out said that the GPU with other users'
    processes (or draining, or gone) was all that kept the job waiting.

    `enable`: only the draining GPUs could ever take the job: their `gpuherd gpus enable` is
    said, else it waits with nothing said to end the wait."""
    by_index = {g.index: g for g in gpus}
    groups: dict[Cause, list[int]] = {}
    foreign: list[str] = []
    holding: dict[tuple[tuple[int, ...], int], list[int]] = {}
    runs: dict[tuple[int, str], list[int]] = {}
    for d in sorted(devices, key=lambda d: d.index):
        g = by_index.get(d.index)
        total, cause = d.memory_total, None
        if mem is not None and total is not None and total - margin(total, policy.keep_free) < mem:
            continue  # too small even when free: never the reason the job waits
        if d.state is DeviceState.DRAINING:
            cause = _DRAINING
        elif g is not None:
            sharing = kind is SHARING and g.cap is not None
            cause = _foreign(d, policy, sharing) or _blocker(g, kind, mem)
            outside = None if cause else _outside_memory(d, g, kind, mem, policy)
            foreign += [outside] if outside else []
            free = g.free_mem
            if sharing and cause is None and free is not None and free < (mem or 0) and g.held:
                # A set: two runs of one job may hold memory here (a held run beside its
                # job's next attempt: engine_held_runs.py), named once.
                ids = sorted({r.job_id for r in reservations if r.mem and d.index in r.gpus})
                holding.setdefault((tuple(ids), g.held), []).append(d.index)
            # An exclusive job's memory outside gpuherd: named instead of the GPU's gpuherd
            # jobs (it keeps the job off once they end), as other users' processes are.
            excluded = outside is not None and kind is EXCLUSIVE
            if cause is None and not excluded and not g.fits(kind, mem):  # a run may be why
                kept = [(r.job_id, r.run) for r in reservations if r.run and d.index in r.gpus]
                for run in kept:
                    runs.setdefault(run, []).append(d.index)
                cause = None if kept else _own_jobs(g, kind)
        if cause is not None:
            groups.setdefault(cause, []).append(d.index)
    others = foreign + _held(holding) + _reserved(runs)
    if not beside and not others and groups.keys() <= _OWN_JOBS:
        return []
    causes = [gpu_names(ix, cause, NAMED) for cause, ix in groups.items()]
    if enable and (drained := groups.get(_DRAINING)):
        at = list(groups).index(_DRAINING)
        causes[at] += (
            f": nothing new starts there until `gpuherd gpus enable {listed(drained, ',')}`"
        )
    return causes + others


_FULL = _cause(("is", "are"), "full of gpuherd jobs")
_RUNS_JOBS = _cause(("runs", "run"), "gpuherd jobs")
_OWN_JOBS = {_FULL, _RUNS_JOBS}


def _own_jobs(g: Gpu, kind: Kind) -> Cause | None:
    """Whether gpuherd's own jobs are what keeps a GPU, that nothing else keeps, from the
    job: all its slots taken (an exclusive job: any job on it). A job with --mem waits for
    memory, which `_held` names."""
    if kind is EXCLUSIVE:
        return _RUNS_JOBS if g.count else None
    if kind is PLAIN or g.cap is None:
        return _FULL if g.count >= g.slots else None
    return None


def _reserved(runs: dict[tuple[int, str], list[int]]) -> list[str]:
    """The GPUs kept for runs that are not their jobs' watched attempts (a restored herd.db:
    a job held for its run), named with the job and the run, as `gpuherd gpus` names them:
    else the job seemed to wait for a free GPU with none of gpuherd's jobs running there."""
    return [
        f"{gpu_names(ix, ('is', 'are'))} reserved for job {job_id}, whose {run}"
        for (job_id, run), ix in runs.items()
    ]


def _held(holding: dict[tuple[tuple[int, ...], int], list[int]]) -> list[str]:
    """Which of gpuherd's jobs hold the memory a job with --mem waits for: `gpuherd gpus` shows
    only each GPU's total (HELD; a job holds its request from its start, before it uses any
    of it). A few groups of GPUs by name; beyond, only the GPUs."""
    if len(holding) > 3:
        every = sorted(i for indices in holding.values() for i in indices)
        return [f"gpuherd jobs hold memory on {gpus_named(every, NAMED)}"]
    return [
        f"{jobs_named(ids)} {'holds' if len(ids) == 1 else 'hold'} {format_size(held)} "
        f"of {gpus_named(ix)}"
        for (ids, held), ix in holding.items()
    ]


def _outside_memory(d: Device, g: Gpu, kind: Kind, mem: int | None, policy: Policy) -> str | None:
    """The memory used outside gpuherd's jobs that keeps the job off a GPU nothing else keeps
    it from, as placement decides: an exclusive job's --mem beyond what the GPU has once
    empty (`Gpu.holds_ever`), a --mem job's beyond what is free but would be without it."""
    used, need = foreign_memory(d, policy), mem or 0
    # What the job would have there: an exclusive job the empty GPU's (`Gpu.holds_ever`).
    room = g.cap if kind is EXCLUSIVE else g.free_mem if kind is SHARING else None
    # Named only where it is what keeps the job off: with it gone, the job would fit.
    if room is not None and used and room < need <= room + used:
        return _outside(d, used)
    return None


def _outside(d: Device, used: int) -> str:
    """What takes memory outside gpuherd's jobs: listed processes, or memory in use that no
    listed process holds (another container's processes, which NVML does not list)."""
    if d.foreign_processes:
        return f"other users' processes use {format_size(used)} of GPU {d.index}"
    return f"{format_size(used)} of GPU {d.index} is in use outside gpuherd, by no listed process"
