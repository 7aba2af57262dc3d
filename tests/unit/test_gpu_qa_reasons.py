"""Why a job with --mem waits, when memory is what is short: which gpuherd jobs hold it (what
`gpuherd gpus` does not show), and memory in use that no listed process holds."""

from __future__ import annotations

from test_placement import GIB, job

from gpuherd.core.model import Device, ForeignMode, Policy, Reservation
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


def test_a_job_with_mem_kept_off_by_foreign_exclusive_waits_for_gpus_without_them() -> None:
    """With memory to spare, it said "waiting for 1.0 GiB free on 1 GPU (GPU 0 is busy with
    other users' processes)": the setting keeps it off, not a lack of memory."""
    exclusive = Policy(foreign=ForeignMode.EXCLUSIVE)
    theirs = [
        Device(i, memory_total=80 * GIB, foreign_processes=1, foreign_memory=20 * GIB)
        for i in range(2)
    ]
    assert why_waiting(job(10, mem=GIB), theirs[:1], [], exclusive) == (
        "waiting for a GPU without other users' processes "
        "(GPU 0 has other users' processes: config foreign exclusive)"
    )
    assert why_waiting(job(10, gpus=2, mem=GIB), theirs, [], exclusive) == (
        "waiting for 2 GPUs without other users' processes "
        "(GPUs 0, 1 have other users' processes: config foreign exclusive)"
    )
    # Where memory is short too, it is memory the job waits for.
    assert why_waiting(job(10, mem=70 * GIB), theirs[:1], [], exclusive) == (
        "waiting for 70.0 GiB free on 1 GPU "
        "(GPU 0 has other users' processes: config foreign exclusive)"
    )
    # Only `foreign exclusive` keeps a job with --mem off such a GPU.
    assert why_waiting(job(10, mem=GIB), theirs[:1], [], Policy()).startswith(
        "waiting for its turn"
    )
