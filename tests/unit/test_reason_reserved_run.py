"""A queued job that waits behind a run its job was held for (herd.db restored from an older
backup: engine_held_runs.py) names that job and the run, as it names the job a starving
older one holds GPUs for (core/reasons.py; the run's reservation says what it is)."""

from __future__ import annotations

from test_placement import job

from gpuherd.core.model import Device, DeviceState, Policy, Reservation
from gpuherd.core.reasons import why_waiting

RUN = "attempt 1 runs unwatched (pid 3621)"


def test_a_job_behind_a_held_run_names_its_job_and_the_run() -> None:
    devices = [Device(0)]
    held_run = Reservation(2, (0,), run=RUN)
    assert why_waiting(job(3), devices, [held_run], Policy()) == (
        "waiting for a free GPU (GPU 0 is reserved for job 2, whose attempt 1 runs unwatched "
        "(pid 3621))"  # before: "waiting for a free GPU", no job running there
    )


def test_only_the_gpus_the_run_keeps_from_the_job_are_named() -> None:
    devices = [Device(i) for i in range(4)]
    runs = [Reservation(2, (0, 1), run=RUN), Reservation(5, (3,))]  # job 5 runs, watched
    # Three GPUs wanted, one free: the run's GPUs are named together, job 5's as full.
    assert why_waiting(job(3, gpus=3), devices, runs, Policy()) == (
        "waiting for 3 free GPUs (GPU 3 is full of gpuherd jobs; GPUs 0, 1 are reserved for "
        "job 2, whose attempt 1 runs unwatched (pid 3621))"
    )
    # A GPU with a free slot beside the run is no reason: the job fits there.
    roomy = [Device(0, slots=2)]
    assert "reserved" not in why_waiting(job(3), roomy, [Reservation(2, (0,), run=RUN)])


def test_a_gpu_that_waits_for_another_reason_says_that_one() -> None:
    draining = [Device(0, state=DeviceState.DRAINING)]
    assert why_waiting(job(3), draining, [Reservation(2, (0,), run=RUN)], Policy()) == (
        "waiting for a free GPU (GPU 0 is draining: nothing new starts there until `gpuherd "
        "gpus enable 0`)"
    )


def test_a_job_with_two_runs_on_a_gpu_is_named_once() -> None:
    """Released while its held run runs, job 2 runs its next attempt beside that run, on the
    same GPU (both with --mem): the memory they hold is named as job 2's, once (before: "jobs
    2 hold", for two job ids)."""
    gib = 2**30
    devices = [Device(0, memory_total=24 * gib)]
    runs = [
        Reservation(2, (0,), mem=12 * gib, shares=True, run=RUN),  # attempt 1, the held run
        Reservation(2, (0,), mem=8 * gib, shares=True),  # attempt 2, watched
    ]
    assert why_waiting(job(3, mem=8 * gib), devices, runs, Policy()) == (
        "waiting for 8.0 GiB free on 1 GPU (job 2 holds 20.0 GiB of GPU 0; GPU 0 is reserved "
        "for job 2, whose attempt 1 runs unwatched (pid 3621))"
    )
