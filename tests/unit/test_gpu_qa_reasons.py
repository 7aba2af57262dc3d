"""Why a job with --mem waits, when memory is what is short: which gpuherd jobs hold it (what
`gpuherd gpus` does not show), and memory in use that no listed process holds."""

from __future__ import annotations

from test_placement import GIB, job

from gpuherd.core.model import Device, Policy, Reservation
from gpuherd.core.reasons import why_waiting


def gpus(count: int) -> list[Device]:
    return [Device(i, memory_total=24 * GIB) for i in range(count)]


def test_the_jobs_holding_the_memory_are_named_with_their_gpus() -> None:
    held = [
        Reservation(4, (0, 1), mem=20 * GIB, shares=True),
        Reservation(7, (2,), mem=10 * GIB, shares=True),
        Reservation(8, (2,), mem=10 * GIB, shares=True),
    ]
    assert why_waiting(job(10, mem=8 * GIB), gpus(3), held) == (
        "waiting for 8.0 GiB free on 1 GPU "
        "(job 4 holds 20.0 GiB of GPUs 0, 1; jobs 7, 8 hold 20.0 GiB of GPU 2)"
    )
    # A GPU with room for it is no reason: only those short of memory are named.
    assert why_waiting(job(10, gpus=3, mem=8 * GIB), gpus(3), held[:1]) == (
        "waiting for 8.0 GiB free on 3 GPUs (job 4 holds 20.0 GiB of GPUs 0, 1)"
    )


def test_many_holders_are_summed_up_by_their_gpus() -> None:
    held = [Reservation(i + 1, (i,), mem=(20 + i % 2) * GIB, shares=True) for i in range(8)]
    held[2] = Reservation(3, (2,), mem=19 * GIB, shares=True)
    held[3] = Reservation(4, (3,), mem=18 * GIB, shares=True)
    assert why_waiting(job(10, mem=8 * GIB), gpus(8), held) == (
        "waiting for 8.0 GiB free on 1 GPU (gpuherd jobs hold memory on GPUs 0-7)"
    )


def test_memory_in_use_outside_gpuherd_without_a_process_is_worded_so() -> None:
    unlisted = [Device(0, memory_total=80 * GIB, foreign_memory=70 * GIB)]
    assert why_waiting(job(10, mem=20 * GIB), unlisted, [], Policy()) == (
        "waiting for 20.0 GiB free on 1 GPU "
        "(70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )
