"""A configured GPU the probe does not see now (lost, fallen off the bus) may come back: a job
only it could run is accepted and waits for it; what could never run is still refused. And
a --mem job kept off a GPU by its job limit waits for a slot, not for memory."""

from __future__ import annotations

from typing import Any

from test_placement import GIB, job

from gpuherd.core.model import Device, JobSpec, Policy, Reservation
from gpuherd.core.reasons import why_waiting
from gpuherd.core.units import parse_size
from gpuherd.submission import never_runs

SEEN = [Device(0, memory_total=24 * GIB)]
LOST_24 = [Device(1, memory_total=24 * GIB)]  # as last seen
NEVER_SEEN = [Device(1)]  # lost since the daemon started: its size is unknown


def spec(**asks: Any) -> JobSpec:
    return job(1, **asks).spec


def test_a_job_only_a_lost_gpu_could_run_is_accepted() -> None:
    for asks in ({"only_gpus": (1,)}, {"gpus": 2}, {"gpus": 2, "mem": 10 * GIB}):
        assert never_runs(spec(**asks), SEEN, Policy(), LOST_24) is None, asks
    # Without the lost GPU counted, these are the old refusals.
    assert never_runs(spec(only_gpus=(1,)), SEEN, Policy()) == (
        "asks for 1 GPU of --only-gpus 1, but gpuherd has no GPU 1: name GPUs gpuherd has in "
        "only_gpus (--only-gpus): 0"
    )
    assert (
        never_runs(spec(gpus=2), SEEN, Policy())
        == "asks for 2 GPUs but gpuherd has only 1: give fewer gpus (--gpus), at most 1"
    )


def test_what_could_never_run_even_with_the_lost_gpu_is_refused() -> None:
    assert never_runs(spec(gpus=3), SEEN, Policy(), LOST_24) == (
        "asks for 3 GPUs but gpuherd has only 2: give fewer gpus (--gpus), at most 2"
    )
    assert never_runs(spec(only_gpus=(2,)), SEEN, Policy(), LOST_24) == (
        "asks for 1 GPU of --only-gpus 2, but gpuherd has no GPU 2: name GPUs gpuherd has in "
        "only_gpus (--only-gpus): 0,1"
    )
    # Its size as last seen counts.
    assert never_runs(spec(only_gpus=(1,), mem=30 * GIB), SEEN, Policy(), LOST_24) == (
        "asks for 30.0 GiB per GPU but the largest GPU of --only-gpus 1 has 24.0 GiB: give a "
        "smaller mem (--mem), at most 24.0 GiB"
    )
    # A GPU never seen may be of any size.
    assert never_runs(spec(only_gpus=(1,), mem=30 * GIB), SEEN, Policy(), NEVER_SEEN) is None


def test_a_job_waiting_for_a_lost_gpu_says_so() -> None:
    for asks in ({"only_gpus": (1,)}, {"gpus": 2}):
        reason = why_waiting(job(1, **asks), SEEN, [], Policy(), missing=LOST_24)
        assert reason == "waiting for GPU 1, configured but not seen now: `gpuherd gpus`", asks
    # One the GPUs seen can run is not waiting for the lost one: GPU 0 is busy.
    busy = [Reservation(9, (0,))]
    assert why_waiting(job(1), SEEN, busy, Policy(), missing=LOST_24) == "waiting for a free GPU"
    either = job(1, only_gpus=(0, 1, 5))  # GPU 5 is not configured at all
    assert why_waiting(either, SEEN, busy, Policy(), missing=LOST_24) == (
        "waiting for a free GPU of --only-gpus 0,1,5 "
        "(GPU 0 is full of gpuherd jobs; "
        "GPU 1 is configured but not seen now; GPU 5 is not there now: `gpuherd gpus`)"
    )


def test_a_mem_job_at_a_gpus_job_limit_waits_for_a_slot_not_memory() -> None:
    two_slots = [Device(0, slots=2, max_jobs=2, memory_total=24 * GIB)]
    running = [Reservation(i, (0,), mem=GIB, shares=True) for i in (1, 2)]
    third = job(3, mem=GIB, only_gpus=(0,))
    assert why_waiting(third, two_slots, running, Policy()) == (
        "waiting for a free slot on 1 GPU of --only-gpus 0 "
        "(GPU 0 has reached the limit of jobs set for it)"
    )
    # Where memory is what is short, the reason says memory.
    full = [Reservation(1, (0,), mem=parse_size("23.5GiB"), shares=True)]
    assert why_waiting(third, two_slots, full, Policy()) == (
        "waiting for 1.0 GiB free on 1 GPU of --only-gpus 0 (job 1 holds 23.5 GiB of GPU 0)"
    )
    # A job without --mem holding the GPU's only slot: the --mem job waits for that slot.
    owned = [Reservation(1, (0,))]
    assert why_waiting(third, [Device(0, memory_total=24 * GIB)], owned, Policy()) == (
        "waiting for a free slot on 1 GPU of --only-gpus 0 (GPU 0 is taken by a job without --mem)"
    )
