"""A reason's cause said of several GPUs is plural to its end: `GPUs 0, 1 have reached the limit
of jobs set for them` (it said `set for it`), `GPUs 0-2 are taken by jobs without --mem` (it
said `by a job`, as if one job held all three, where each runs its own); of one GPU, as before."""

from __future__ import annotations

from test_placement import GIB, job

from gpuherd.core.model import Device, Policy, Reservation
from gpuherd.core.reasons import why_waiting


def test_gpus_at_their_job_limit_are_said_in_the_plural() -> None:
    devices = [Device(i, slots=2, max_jobs=1) for i in range(2)]
    busy = [Reservation(i + 1, (i,), shares=True) for i in range(2)]
    assert why_waiting(job(10), devices, busy, Policy()) == (
        "waiting for a free GPU (GPUs 0, 1 have reached the limit of jobs set for them)"
    )
    assert why_waiting(job(10), devices[:1], busy[:1], Policy()) == (
        "waiting for a free GPU (GPU 0 has reached the limit of jobs set for it)"
    )


def test_gpus_taken_by_jobs_without_mem_are_said_in_the_plural() -> None:
    devices = [Device(i, memory_total=24 * GIB) for i in range(3)]
    owned = [Reservation(i + 1, (i,), mem=GIB) for i in range(3)]  # a job without --mem each
    assert why_waiting(job(10, mem=GIB), devices, owned) == (
        "waiting for a free slot on 1 GPU (GPUs 0-2 are taken by jobs without --mem)"
    )
    assert why_waiting(job(10, mem=GIB), devices[:1], owned[:1]) == (
        "waiting for a free slot on 1 GPU (GPU 0 is taken by a job without --mem)"
    )


def test_causes_of_several_gpus_side_by_side_each_agree_with_their_gpus() -> None:
    devices = [Device(i, memory_total=24 * GIB, slots=2, max_jobs=1) for i in range(2)]
    devices += [Device(i, memory_total=24 * GIB) for i in range(2, 4)]
    busy = [Reservation(i + 1, (i,), shares=True) for i in range(2)]
    busy += [Reservation(i + 1, (i,), mem=GIB) for i in range(2, 4)]
    said = why_waiting(job(10, mem=GIB), devices, busy)
    assert said == (
        "waiting for a free slot on 1 GPU (GPUs 0, 1 have reached the limit of jobs set for "
        "them; GPUs 2, 3 are taken by jobs without --mem)"
    )
