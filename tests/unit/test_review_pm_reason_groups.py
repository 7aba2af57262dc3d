"""A waiting job's reason names each group of GPUs in a few numbers (64 GPUs made a line of
370 characters), and names GPUs full of gpuherd jobs beside an --only-gpus GPU not there
now (leaving them out said the absent GPU was all that kept the job waiting)."""

from __future__ import annotations

from gpuherd.core.model import Device, Job, JobSpec, JobState, Policy, Reservation
from gpuherd.core.naming import gpus_named
from gpuherd.core.reasons import why_waiting

GIB = 1 << 30


def _job(only_gpus: tuple[int, ...] = ()) -> Job:
    spec = JobSpec(command="true", cwd="/tmp", only_gpus=only_gpus)
    return Job(id=500, spec=spec, state=JobState.QUEUED)


def test_64_gpus_every_other_busy_with_other_users_names_a_few_of_each_group() -> None:
    devices = [
        Device(i, memory_total=80 * GIB, foreign_processes=int(i % 2 == 0)) for i in range(64)
    ]
    full = [Reservation(100 + i, (i,)) for i in range(1, 64, 2)]
    reason = why_waiting(_job(), devices, full, Policy())
    assert reason == (
        "waiting for a free GPU (GPUs 0, 2, 4, 6, 8, 10 and 26 more are busy with other "
        "users' processes; GPUs 1, 3, 5, 7, 9, 11 and 26 more are full of gpuherd jobs)"
    )


def test_ranges_count_as_one_and_what_is_left_out_counts_every_gpu() -> None:
    assert gpus_named([0, 1, 2, 3, 5, 7, 9, 11, 13, 20, 21, 22, 23], most=6) == (
        "GPUs 0-3, 5, 7, 9, 11, 13 and 4 more"
    )
    assert gpus_named(list(range(0, 12, 2)), most=6) == "GPUs 0, 2, 4, 6, 8, 10"
    assert gpus_named(list(range(0, 12, 2))) == "GPUs 0, 2, 4, 6, 8, 10"


def test_a_full_gpu_is_named_beside_an_only_gpus_gpu_not_there() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, memory_total=80 * GIB)]
    on_1 = [Reservation(7, (1,))]
    assert why_waiting(_job(only_gpus=(1, 9)), devices, on_1, Policy()) == (
        "waiting for a free GPU of --only-gpus 1,9 "
        "(GPU 1 is full of gpuherd jobs; GPU 9 is not there now: `gpuherd gpus`)"
    )
    lost = [Device(9, memory_total=80 * GIB)]
    assert why_waiting(_job(only_gpus=(1, 9)), devices, on_1, Policy(), missing=lost) == (
        "waiting for a free GPU of --only-gpus 1,9 "
        "(GPU 1 is full of gpuherd jobs; GPU 9 is configured but not seen now: `gpuherd gpus`)"
    )
    # Alone, a full GPU is what `waiting for a free GPU` already says.
    assert why_waiting(_job(only_gpus=(1,)), devices, on_1, Policy()) == (
        "waiting for a free GPU of --only-gpus 1"
    )
