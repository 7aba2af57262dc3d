"""Placement by memory: --mem, exclusive jobs, other users' processes, the margins, host memory
and GPU links. Properties over the machines and queues of test_placement, then examples."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given
from test_placement import (
    GIB,
    NOW,
    PROPS,
    Case,
    cases,
    counting,
    gpu_jobs_forever,
    job,
    kind,
    plain_ok,
    replay,
    run,
)

from gpuherd.core.model import (
    Assignment,
    Device,
    DeviceState,
    ForeignMode,
    Policy,
    Reservation,
)
from gpuherd.core.placement import gpus_open, plan
from gpuherd.core.reasons import never_fits, why_waiting


@PROPS
@given(cases())
def test_memory_is_never_overcommitted_by_jobs_that_declare_it(case: Case) -> None:
    result = run(case)
    spec = {j.id: j.spec for j in case.pending}
    held: Counter[int] = Counter()
    for r in case.reservations:
        for i in r.gpus:
            held[i] += r.mem
    shared: set[int] = set()
    for a in result:
        for i in a.gpus:
            held[i] += spec[a.job_id].mem or 0
            if kind(spec[a.job_id]) == "sharing":
                shared.add(i)
    policy = case.policy
    for d in case.devices:
        if d.memory_total is None or d.index not in shared:
            continue
        foreign = 0 if policy.foreign is ForeignMode.IGNORE else d.foreign_memory
        margin = math.ceil(policy.keep_free * d.memory_total)
        # Reservations alone may exceed it (measured use grew): then no job with --mem
        # joined the GPU, and it is not in `shared`.
        assert held[d.index] + foreign + margin <= d.memory_total


@PROPS
@given(cases())
def test_exclusive_jobs_start_only_on_empty_gpus_and_nothing_joins_them(case: Case) -> None:
    result = run(case)
    spec = {j.id: j.spec for j in case.pending}
    on: dict[int, list[int]] = {}
    for a in result:
        for i in a.gpus:
            on.setdefault(i, []).append(a.job_id)
    alone = {i for r in case.reservations if r.exclusive for i in r.gpus}
    assert not alone & on.keys()
    for j, before in replay(case, result):
        if j.spec.exclusive:
            assert all(one.count == 0 for one in before.values())
            assert all(on[i] == [j.id] for i in before)
    assert all(not spec[i].exclusive for ids in on.values() for i in ids if len(ids) > 1)


@PROPS
@given(cases())
def test_other_users_processes_count_as_the_policy_says(case: Case) -> None:
    result = run(case)
    spec = {j.id: j.spec for j in case.pending}
    devices = {d.index: d for d in case.devices}
    mode = case.policy.foreign
    for a in result:
        for i in a.gpus:
            d = devices[i]
            if d.foreign_processes == 0 or mode in (ForeignMode.IGNORE, ForeignMode.MEMORY):
                continue
            # AUTO: only a job with --mem, bound by the memory left (a GPU of unknown size
            # has none to measure, so it stays busy); EXCLUSIVE: never.
            assert mode is ForeignMode.AUTO
            assert kind(spec[a.job_id]) == "sharing" and d.memory_total is not None


@PROPS
@given(cases())
def test_host_memory_margin_is_never_crossed(case: Case) -> None:
    result = run(case)
    if case.host_free is None:
        return
    ram = {j.id: j.spec.ram or 0 for j in case.pending}
    taken = sum(ram[a.job_id] for a in result)
    assert not result or case.host_free - taken >= case.policy.keep_ram


# ---- examples --------------------------------------------------------------------------


def two_24() -> list[Device]:
    return [Device(0, memory_total=24 * GIB), Device(1, memory_total=24 * GIB)]


def test_ten_jobs_with_mem_run_two_per_gpu_never_three() -> None:
    pending = [job(i, mem=10 * GIB) for i in range(10)]
    result = plan(pending, two_24(), [], Policy(), NOW)
    assert len(result) == 4
    assert Counter(a.gpus for a in result) == {(0,): 2, (1,): 2}
    # Once they run, a pass adds none: they hold 20 of the 24 GiB of each GPU.
    running = [Reservation(a.job_id, a.gpus, mem=10 * GIB, shares=True) for a in result]
    assert plan(pending[4:], two_24(), running, Policy(), NOW) == []


def test_the_margin_is_never_handed_out() -> None:
    pending = [job(i, mem=10 * GIB) for i in range(10)]
    result = plan(pending, two_24(), [], Policy(keep_free=0.2), NOW)  # 10 + 10 > 24 - 4.8
    assert result == [Assignment(0, (0,)), Assignment(1, (1,))]


def test_a_foreign_process_keeps_plain_jobs_off_but_leaves_its_free_memory_to_mem_jobs() -> None:
    other = Device(1, memory_total=24 * GIB, foreign_processes=1, foreign_memory=20 * GIB)
    devices = [Device(0, memory_total=24 * GIB), other]
    running = [Reservation(1, (0,))]
    pending = [job(10), job(11, mem=4 * GIB), job(12, mem=1 * GIB)]
    assert plan(pending, devices, running, Policy(), NOW) == [Assignment(11, (1,))]
    memory = Policy(foreign=ForeignMode.MEMORY)
    assert plan(pending, devices, running, memory, NOW) == [Assignment(10, (1,))]
    assert plan(pending[1:], devices, running, memory, NOW) == [Assignment(11, (1,))]
    assert plan(pending, devices, running, Policy(foreign=ForeignMode.EXCLUSIVE), NOW) == []
    ignore = Policy(foreign=ForeignMode.IGNORE)
    assert plan([job(13, mem=24 * GIB), *pending], devices, running, ignore, NOW) == [
        Assignment(13, (1,))
    ]


def test_a_plain_job_owns_its_gpu_unless_it_has_more_slots() -> None:
    devices = [Device(0, memory_total=80 * GIB)]
    running = [Reservation(1, (0,), mem=10 * GIB)]
    assert plan([job(10, mem=GIB)], devices, running, Policy(), NOW) == []
    devices = [Device(0, slots=2, memory_total=80 * GIB)]
    assert plan([job(10, mem=GIB), job(11, mem=GIB)], devices, running, Policy(), NOW) == [
        Assignment(10, (0,))
    ]
    # Jobs with --mem leave a plain job its GPU only while they do not fill the slots.
    sharing = [Reservation(1, (0,), mem=10 * GIB, shares=True)]
    assert plan([job(10), job(11)], devices, sharing, Policy(), NOW) == [Assignment(10, (0,))]


def test_a_gpu_of_unknown_size_counts_jobs_with_mem_by_slots() -> None:
    devices = [Device(0, slots=2)]
    assert plan([job(i, mem=100 * GIB) for i in range(3)], devices, [], Policy(), NOW) == [
        Assignment(0, (0,)),
        Assignment(1, (0,)),
    ]


def test_measured_use_above_the_free_memory_adds_nothing_with_mem() -> None:
    devices = [Device(0, slots=2, memory_total=24 * GIB)]
    grown = [Reservation(1, (0,), mem=30 * GIB, shares=True)]
    assert plan([job(10, mem=GIB), job(11)], devices, grown, Policy(), NOW) == [
        Assignment(11, (0,))
    ]


def test_max_jobs_caps_jobs_with_mem() -> None:
    devices = [Device(0, memory_total=80 * GIB, max_jobs=3)]
    result = plan([job(i, mem=GIB) for i in range(5)], devices, [], Policy(), NOW)
    assert [a.job_id for a in result] == [0, 1, 2]


def test_an_exclusive_job_needs_an_empty_gpu_and_stays_alone() -> None:
    devices = [Device(0, slots=4, memory_total=80 * GIB), Device(1, slots=4, memory_total=80 * GIB)]
    running = [Reservation(1, (0,), mem=GIB, shares=True)]
    pending = [job(10, exclusive=True), job(11), job(12, mem=GIB), job(13, exclusive=True)]
    assert plan(pending, devices, running, Policy(), NOW) == [
        Assignment(10, (1,)),
        Assignment(11, (0,)),
        Assignment(12, (0,)),
    ]
    alone = [Reservation(1, (0,), exclusive=True)]
    assert plan(pending[1:3], devices[:1], alone, Policy(), NOW) == []


def test_a_two_gpu_job_gets_linked_gpus() -> None:
    fast = {0: {1: 2, 2: 1, 3: 1}, 1: {0: 2, 2: 1, 3: 1}, 2: {3: 2, 0: 1, 1: 1}, 3: {2: 2}}
    # Without links the smallest pair would be {1, 3} (best fit: the 80 GiB GPUs stay for
    # the jobs only they can run).
    sizes = [80, 40, 80, 40]
    devices = [Device(i, memory_total=sizes[i] * GIB, links=fast[i]) for i in range(4)]
    assert plan([job(10, gpus=2)], devices, [], Policy(), NOW) == [Assignment(10, (0, 1))]
    running = [Reservation(1, (0,))]
    assert plan([job(10, gpus=2)], devices, running, Policy(), NOW) == [Assignment(10, (2, 3))]
    plain = [Device(i, memory_total=sizes[i] * GIB) for i in range(4)]
    assert plan([job(10, gpus=2)], plain, [], Policy(), NOW) == [Assignment(10, (1, 3))]
    # Each GPU added is the one whose slowest link to those chosen is fastest: 3 joins 0
    # and 1 (links 2 and 2), not 2 (link 0 to GPU 1), though 2 ranks before it.
    mesh = {0: {1: 3, 2: 2, 3: 2}, 1: {2: 0, 3: 2}, 2: {3: 2}, 3: {}}
    devices = [Device(i, links=mesh[i]) for i in range(4)]
    assert plan([job(10, gpus=3)], devices, [], Policy(), NOW) == [Assignment(10, (0, 1, 3))]


def test_host_memory_limits_jobs_with_ram_and_the_margin_stops_all() -> None:
    policy = Policy(keep_ram=2 * GIB)
    pending = [job(i, gpus=0, ram=4 * GIB) for i in range(3)] + [job(3, gpus=0)]
    assert plan(pending, [], [], policy, NOW, host_free=10 * GIB) == [
        Assignment(0, ()),
        Assignment(1, ()),
        Assignment(3, ()),
    ]
    pulled: list[int] = []
    below = plan(counting(gpu_jobs_forever(), pulled), [Device(0)], [], policy, NOW, host_free=GIB)
    assert below == [] and pulled == []
    assert plan(pending, [], [], policy, NOW) == [Assignment(i, ()) for i in range(4)]


def test_a_starving_job_with_mem_holds_its_gpu_against_smaller_ones() -> None:
    devices = [Device(0, memory_total=80 * GIB)]
    running = [Reservation(1, (0,), mem=50 * GIB, shares=True)]
    big = job(10, mem=60 * GIB, queued_at=NOW - 301)
    small = job(11, mem=10 * GIB)
    assert plan([big, small], devices, running, Policy(), NOW) == []
    fresh = job(10, mem=60 * GIB)
    assert plan([fresh, small], devices, running, Policy(), NOW) == [Assignment(11, (0,))]


def test_gpus_open_sees_room_for_jobs_with_mem_behind_full_slots() -> None:
    devices = [Device(0, memory_total=80 * GIB)]
    running = [Reservation(1, (0,), mem=30 * GIB, shares=True)]
    assert gpus_open(devices, running, Policy())
    assert not gpus_open(devices, [Reservation(1, (0,), mem=30 * GIB)], Policy())
    assert not gpus_open([Device(0)], [Reservation(1, (0,), shares=True)], Policy())


def test_a_job_waiting_for_host_memory_holds_no_gpus() -> None:
    devices = [Device(0), Device(1)]
    big = job(10, gpus=2, ram=64 * GIB, queued_at=0.0)
    assert plan([big, job(11)], devices, [], Policy(), NOW, host_free=8 * GIB) == [
        Assignment(11, (0,))
    ]


def test_why_waiting_names_the_cause() -> None:
    devices = two_24()
    shared = [Reservation(1, (0,), mem=20 * GIB, shares=True)]
    assert why_waiting(job(10, mem=20 * GIB), devices[:1], shared) == (
        "waiting for 20.0 GiB free on 1 GPU (job 1 holds 20.0 GiB of GPU 0)"
    )
    assert why_waiting(job(10, exclusive=True), devices[:1], shared) == "waiting for an empty GPU"
    assert why_waiting(job(10, gpus=2, exclusive=True), devices, shared) == (
        "waiting for 2 empty GPUs"
    )
    owned = [Reservation(1, (0,), mem=GIB)]
    assert why_waiting(job(10, mem=GIB), devices[:1], owned) == (
        "waiting for a free slot on 1 GPU (GPU 0 is taken by a job without --mem)"
    )  # the memory is there: the slot is not
    foreign = [Device(0, memory_total=24 * GIB, foreign_processes=1, foreign_memory=20 * GIB)]
    assert why_waiting(job(10), foreign, []) == (
        "waiting for a free GPU (GPU 0 is busy with other users' processes)"
    )
    assert why_waiting(job(10, mem=8 * GIB), foreign, []) == (
        "waiting for 8.0 GiB free on 1 GPU (other users' processes use 20.0 GiB of GPU 0)"
    )
    draining = [*devices, Device(2, state=DeviceState.DRAINING), Device(3, slots=2, max_jobs=1)]
    busy = [Reservation(1, (0,)), Reservation(2, (1,)), Reservation(3, (3,), shares=True)]
    assert why_waiting(job(10), draining, busy, Policy()) == (
        "waiting for a free GPU (GPUs 0, 1 are full of gpuherd jobs; GPU 2 is draining; "
        "GPU 3 has reached the limit of jobs set for it)"
    )
    policy = Policy(keep_ram=2 * GIB)
    assert why_waiting(job(10, ram=8 * GIB), devices, [], policy, host_free=7 * GIB) == (
        "waiting for 8.0 GiB of host memory (5.0 GiB available beyond the 2.0 GiB kept free)"
    )
    assert why_waiting(job(10, gpus=0), devices, [], policy, host_free=GIB) == (
        "waiting for host memory (1.0 GiB available, 2.0 GiB must stay free)"
    )
    assert why_waiting(job(10), devices, [], policy, host_free=GIB).startswith("waiting for host")
    assert why_waiting(job(10), devices, [], policy).startswith("waiting for its turn")


def test_never_fits_keeps_the_margin() -> None:
    devices = [Device(0, memory_total=24 * GIB), Device(1, memory_total=24 * GIB)]
    assert never_fits(1, 23 * GIB, devices) is None
    assert never_fits(1, 23 * GIB, devices, Policy(keep_free=0.1)) == (
        "asks for 23.0 GiB per GPU but the largest GPU has 24.0 GiB (21.6 GiB once 10% is kept "
        "free): give a smaller mem (--mem), at most 21.6 GiB"
    )
    mixed = [Device(0, memory_total=80 * GIB), devices[1]]
    assert never_fits(2, 22 * GIB, mixed, Policy(keep_free=0.1)) == (
        "asks for 2 GPUs with 22.0 GiB each but only 1 GPU has that much once 10% is kept free"
        ": give fewer gpus (--gpus), at most 1, or a smaller mem (--mem)"
    )
    assert never_fits(3, None, mixed, exclusive=True) == (
        "asks for 3 exclusive GPUs but gpuherd has only 2: give fewer gpus (--gpus), at most 2"
    )
    # Other users' processes may go away: their memory does not make a job impossible.
    foreign = [Device(0, memory_total=24 * GIB, foreign_processes=1, foreign_memory=20 * GIB)]
    assert never_fits(1, 20 * GIB, foreign, Policy(foreign=ForeignMode.EXCLUSIVE)) is None


def test_plain_ok_helper_matches_the_modes() -> None:
    # The helper the properties lean on, against the table in the issue.
    d = Device(0, foreign_processes=1)
    assert [plain_ok(d, Policy(foreign=m)) for m in ForeignMode] == [False, True, False, True]
