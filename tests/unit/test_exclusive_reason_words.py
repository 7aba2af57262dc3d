"""An exclusive job's reason names what keeps each GPU empty of gpuherd jobs from it, in the
words a job with --mem gets: with --mem, memory used outside gpuherd that leaves too little
(before: `waiting for an empty GPU` alone, though no gpuherd job was there); without --mem,
only other users' processes that `foreign` makes the GPU busy with, as placement decides."""

from __future__ import annotations

from test_placement import GIB, NOW, job

from gpuherd.core.model import Assignment, Device, ForeignMode, Policy, Reservation
from gpuherd.core.placement import plan
from gpuherd.core.reasons import why_waiting

UNLISTED = Device(0, memory_total=80 * GIB, foreign_memory=70 * GIB)
"""70 GiB in use by no listed process (another container's): counted as other users'."""


def test_exclusive_mem_job_names_memory_used_outside_gpuherd() -> None:
    big = job(10, mem=20 * GIB, exclusive=True)
    assert plan([big], [UNLISTED], [], Policy(), NOW) == []
    assert why_waiting(big, [UNLISTED], [], Policy()) == (
        "waiting for an empty GPU "
        "(70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )
    # The words of a job with --mem alone, for the same GPU.
    assert why_waiting(job(11, mem=20 * GIB), [UNLISTED], [], Policy()) == (
        "waiting for 20.0 GiB free on 1 GPU "
        "(70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )
    # Listed processes under `foreign memory`: the GPU is not busy, their memory keeps it.
    listed = [Device(0, memory_total=80 * GIB, foreign_processes=1, foreign_memory=70 * GIB)]
    memory = Policy(foreign=ForeignMode.MEMORY)
    assert plan([big], listed, [], memory, NOW) == []
    assert why_waiting(big, listed, [], memory) == (
        "waiting for an empty GPU (other users' processes use 70.0 GiB of GPU 0)"
    )
    # `ignore`: that memory does not count, and the job starts.
    assert plan([big], listed, [], Policy(foreign=ForeignMode.IGNORE), NOW) == [
        Assignment(10, (0,))
    ]


def test_the_outside_memory_is_named_beside_gpus_running_gpuherd_jobs() -> None:
    devices = [UNLISTED, Device(1, memory_total=80 * GIB)]
    on_1 = [Reservation(7, (1,))]
    big = job(10, mem=20 * GIB, exclusive=True)
    assert plan([big], devices, on_1, Policy(), NOW) == []
    assert why_waiting(big, devices, on_1, Policy()) == (
        "waiting for an empty GPU (GPU 1 runs gpuherd jobs; "
        "70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )
    # Once gpuherd's job on GPU 0 ends, its memory outside gpuherd still keeps the job off:
    # named instead of the job, as a GPU busy with other users' processes is.
    on_0 = [Reservation(7, (0,))]
    assert why_waiting(big, [UNLISTED], on_0, Policy()) == (
        "waiting for an empty GPU "
        "(70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )


def test_exclusive_job_without_mem_under_foreign_auto() -> None:
    # Another user's process makes the GPU busy for it (`foreign auto`), named so; memory
    # outside gpuherd alone does not keep a job without --mem off, and is never named.
    listed = Device(0, memory_total=80 * GIB, foreign_processes=1, foreign_memory=10 * GIB)
    alone = job(10, exclusive=True)
    auto = Policy(foreign=ForeignMode.AUTO)
    assert plan([alone], [listed], [], auto, NOW) == []
    assert plan([alone], [UNLISTED], [], auto, NOW) == [Assignment(10, (0,))]
    unlisted = Device(1, memory_total=80 * GIB, foreign_memory=70 * GIB)
    on_1 = [Reservation(7, (1,))]
    assert why_waiting(alone, [listed, unlisted], on_1, auto) == (
        "waiting for an empty GPU "
        "(GPU 0 is busy with other users' processes; GPU 1 runs gpuherd jobs)"
    )
    # With --mem the same: the busy GPU is named once, not its memory too.
    assert why_waiting(job(11, mem=20 * GIB, exclusive=True), [listed], [], auto) == (
        "waiting for an empty GPU (GPU 0 is busy with other users' processes)"
    )


def test_gpus_busy_only_with_gpuherd_jobs_stay_waiting_for_an_empty_gpu() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, memory_total=80 * GIB)]
    busy = [Reservation(1, (0,)), Reservation(2, (1,), mem=GIB, shares=True)]
    for spec in (job(10, exclusive=True), job(11, mem=20 * GIB, exclusive=True)):
        assert plan([spec], devices, busy, Policy(), NOW) == []
        assert why_waiting(spec, devices, busy, Policy()) == "waiting for an empty GPU"


def test_a_gpu_too_small_without_memory_outside_gpuherd_is_not_blamed_on_it() -> None:
    """A 40 GiB GPU with nothing on it cannot hold an exclusive job's 60 GiB anyway: nothing
    outside gpuherd is named for it (`0 B of GPU 0 is in use outside gpuherd` was said)."""
    devices = [Device(0, memory_total=40 * GIB), Device(1, memory_total=80 * GIB)]
    on_1 = [Reservation(7, (1,))]
    big = job(10, mem=60 * GIB, exclusive=True)
    assert plan([big], devices, on_1, Policy(), NOW) == []
    assert "outside gpuherd" not in why_waiting(big, devices, on_1, Policy())


def test_memory_outside_gpuherd_is_named_only_where_the_job_would_fit_without_it() -> None:
    """72 GiB, 10 GiB of it used outside gpuherd, and the 5 % `keep-free` keeps: 70 GiB would
    not fit even without that memory, which is then not what keeps the job off."""
    devices = [Device(0, memory_total=72 * GIB, foreign_memory=10 * GIB)]
    big = job(10, mem=70 * GIB, exclusive=True)
    tight = Policy(keep_free=0.05)
    assert plan([big], devices, [], tight, NOW) == []
    assert "outside gpuherd" not in why_waiting(big, devices, [], tight)
    roomy = job(11, mem=60 * GIB, exclusive=True)  # fits once the 10 GiB are gone
    assert "10.0 GiB of GPU 0 is in use outside gpuherd" in why_waiting(roomy, devices, [], tight)


def test_a_mem_job_beside_an_exclusive_one_waits_for_a_free_gpu_not_a_slot() -> None:
    """A --mem job on a 2-slot GPU that runs an exclusive job was told it waited "for a free
    slot" (one was free): the exclusive job keeps the GPU whole, and it waits for a GPU."""
    two_slots = [Device(0, slots=2, memory_total=80 * GIB)]
    alone = [Reservation(7, (0,), exclusive=True)]
    shared = job(10, mem=GIB)
    assert plan([shared], two_slots, alone, Policy(), NOW) == []
    assert why_waiting(shared, two_slots, alone, Policy()).startswith("waiting for a free GPU")
