"""A job that fits but waits behind a starving older job is told which job holds its GPUs:
placement gives the hold it made (`place`), and why_waiting names its job."""

from __future__ import annotations

from test_placement import NOW, job

from gpuherd.core.model import Device, Policy, Reservation
from gpuherd.core.placement import Hold, place, plan
from gpuherd.core.reasons import why_waiting

POLICY = Policy(reserve_after=300)


def test_the_job_behind_a_hold_names_the_job_it_waits_for() -> None:
    devices = [Device(i) for i in range(3)]
    running = [Reservation(1, (0,))]
    big = job(12, gpus=3, queued_at=NOW - 301)
    small = job(13)
    placed = place([big, small], devices, running, POLICY, NOW)
    assert placed.starts == [] and placed.hold == Hold(12, frozenset({1, 2, 0}))
    assert why_waiting(small, devices, running, POLICY, hold=placed.hold) == (
        "waiting for its turn: GPUs 0-2 are held for job 12, which waits longer"
    )
    # The holder itself waits for its GPUs, not for its turn.
    assert why_waiting(big, devices, running, POLICY, hold=placed.hold) == (
        "waiting for 3 free GPUs"
    )


def test_one_held_gpu_is_named_alone() -> None:
    devices = [Device(0), Device(1)]
    running = [Reservation(1, (0,))]
    big = job(12, gpus=2, queued_at=NOW - 301)
    placed = place([big, job(13)], devices, running, POLICY, NOW)
    assert placed.hold is not None
    assert why_waiting(job(13), devices, running, POLICY, hold=placed.hold) == (
        "waiting for its turn: GPUs 0, 1 are held for job 12, which waits longer"
    )
    one = Hold(12, frozenset({1}))
    assert why_waiting(job(13), devices, running, POLICY, hold=one) == (
        "waiting for its turn: GPU 1 is held for job 12, which waits longer"
    )


def test_a_hold_that_leaves_the_job_room_is_not_its_reason() -> None:
    # Held GPUs the job does not need (it fits beside them): the hold is not what keeps it
    # waiting, so it is not named (the next pass starts it).
    devices = [Device(i) for i in range(3)]
    hold = Hold(12, frozenset({0, 1}))
    assert why_waiting(job(13), devices, [], POLICY, hold=hold) == (
        "waiting for its turn (its GPUs are held for an older job that waits longer)"
    )


def test_a_pass_without_a_starving_job_holds_nothing() -> None:
    devices = [Device(0), Device(1)]
    running = [Reservation(1, (0,))]
    young = job(12, gpus=2, queued_at=NOW - 10)
    placed = place([young, job(13)], devices, running, POLICY, NOW)
    assert placed.hold is None
    assert placed.starts == plan([young, job(13)], devices, running, POLICY, NOW)
