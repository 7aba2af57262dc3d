"""Placement: properties over random machines and queues, plus a few worked examples."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.model import (
    Assignment,
    Device,
    DeviceState,
    Job,
    JobSpec,
    Policy,
    Reservation,
    queue_order_key,
)
from gpuherd.core.placement import never_fits, plan, why_waiting
from gpuherd.core.states import JobState

GIB = 1 << 30
NOW = 10_000.0
REMOVED_GPU = 99
"""An index no generated device has: a GPU that was taken out while a job still held it."""

PROPS = settings(max_examples=200, deadline=None)


def job(
    id: int,
    gpus: int = 1,
    mem: int | None = None,
    priority: int = 0,
    queued_at: float = NOW,
) -> Job:
    spec = JobSpec(command="true", cwd="/tmp", gpus=gpus, mem=mem)
    return Job(
        id=id,
        spec=spec,
        state=JobState.QUEUED,
        priority=priority,
        position=float(id),
        queued_at=queued_at,
    )


def usable(d: Device) -> bool:
    return d.state is DeviceState.ENABLED and d.foreign_processes == 0


@dataclass
class Case:
    devices: list[Device]
    reservations: list[Reservation]
    pending: list[Job]
    policy: Policy


@st.composite
def machines(draw: st.DrawFn) -> tuple[list[Device], list[Reservation]]:
    indices = draw(st.lists(st.integers(0, 15), min_size=1, max_size=8, unique=True))
    devices = [
        Device(
            index=i,
            slots=draw(st.integers(1, 3)),
            state=draw(st.sampled_from([DeviceState.ENABLED] * 3 + [DeviceState.DRAINING])),
            memory_total=draw(st.sampled_from([None, 8 * GIB, 24 * GIB, 40 * GIB, 80 * GIB])),
            foreign_processes=draw(st.sampled_from([0, 0, 0, 1])),
        )
        for i in indices
    ]
    # Reservations as the engine would have made them: within slots and memory.
    slots_left = {d.index: d.slots for d in devices}
    mem_left = {d.index: d.memory_total for d in devices}
    reservations = []
    for job_id in range(1000, 1000 + draw(st.integers(0, 8))):
        open_ = sorted(i for i, n in slots_left.items() if n > 0)
        if not open_:
            break
        gpus = draw(st.lists(st.sampled_from(open_), min_size=1, max_size=3, unique=True))
        if draw(st.integers(0, 3)) == 0:
            gpus.append(REMOVED_GPU)
        known = [m for i in gpus if (m := mem_left.get(i)) is not None]
        limit = min(known, default=80 * GIB) // GIB
        mem = draw(st.integers(0, limit)) * GIB
        for i in gpus:
            if i in slots_left:
                slots_left[i] -= 1
                left = mem_left[i]
                mem_left[i] = None if left is None else left - mem
        reservations.append(Reservation(job_id=job_id, gpus=tuple(gpus), mem=mem))
    return devices, reservations


@st.composite
def cases(draw: st.DrawFn) -> Case:
    devices, reservations = draw(machines())
    pending = []
    for i in range(draw(st.integers(0, 25))):
        mem = draw(st.sampled_from([None, None, 4, 8, 20, 40, 80, 100]))
        pending.append(
            job(
                i,
                gpus=draw(st.sampled_from([0, 1, 1, 1, 2, 2, 3, 4])),
                mem=None if mem is None else mem * GIB,
                priority=draw(st.integers(0, 3)),
                queued_at=NOW - draw(st.sampled_from([0.0, 10.0, 299.0, 300.0, 5000.0])),
            )
        )
    pending.sort(key=queue_order_key)
    policy = Policy(
        reserve_after=300.0,
        max_running=draw(st.one_of(st.none(), st.integers(0, 12))),
    )
    return Case(devices, reservations, pending, policy)


def run(case: Case) -> list[Assignment]:
    return plan(iter(case.pending), case.devices, case.reservations, case.policy, NOW)


def load(case: Case, result: Sequence[Assignment]) -> tuple[Counter[int], Counter[int]]:
    """Jobs and declared memory on each GPU once the result has started."""
    mem_of = {j.id: j.spec.mem or 0 for j in case.pending}
    jobs: Counter[int] = Counter()
    mem: Counter[int] = Counter()
    for r in case.reservations:
        jobs.update(r.gpus)
        for i in r.gpus:
            mem[i] += r.mem
    for a in result:
        jobs.update(a.gpus)
        for i in a.gpus:
            mem[i] += mem_of[a.job_id]
    return jobs, mem


@PROPS
@given(cases())
def test_no_gpu_holds_more_jobs_than_its_slots(case: Case) -> None:
    jobs, _ = load(case, run(case))
    for d in case.devices:
        before = sum(d.index in r.gpus for r in case.reservations)
        assert jobs[d.index] <= max(d.slots, before)


@PROPS
@given(cases())
def test_each_job_gets_exactly_its_count_of_distinct_usable_gpus(case: Case) -> None:
    result = run(case)
    ok = {d.index for d in case.devices if usable(d)}
    asked = {j.id: j.spec.gpus for j in case.pending}
    assert len({a.job_id for a in result}) == len(result)
    for a in result:
        assert len(a.gpus) == asked[a.job_id]
        assert len(set(a.gpus)) == len(a.gpus)
        assert set(a.gpus) <= ok
        assert list(a.gpus) == sorted(a.gpus)


@PROPS
@given(cases())
def test_memory_is_never_overcommitted_by_jobs_that_declare_it(case: Case) -> None:
    result = run(case)
    _, mem = load(case, result)
    declared = {j.id for j in case.pending if j.spec.mem is not None}
    for d in case.devices:
        if d.memory_total is None:
            continue
        if any(d.index in a.gpus for a in result if a.job_id in declared):
            assert mem[d.index] <= d.memory_total


@PROPS
@given(cases())
def test_max_running_is_never_exceeded(case: Case) -> None:
    result = run(case)
    cap = case.policy.max_running
    if cap is not None:
        assert len(result) <= max(0, cap - len(case.reservations))


@PROPS
@given(cases())
def test_cpu_only_jobs_are_only_blocked_by_max_running(case: Case) -> None:
    result = run(case)
    started = {a.job_id for a in result}
    cap = case.policy.max_running
    for j in case.pending:
        if j.spec.gpus == 0 and j.id not in started:
            assert cap is not None and len(case.reservations) + len(result) >= cap


def preferred(
    candidates: list[int], n: int, slots: dict[int, int], mem: dict[int, float]
) -> list[int]:
    return sorted(candidates, key=lambda i: (-slots[i], -mem[i], i))[:n]


@PROPS
@given(cases())
def test_greedy_in_order_no_job_that_fits_is_passed_over(case: Case) -> None:
    """Replays the queue with plain bookkeeping and checks every decision plan made."""
    result = run(case)
    by_job = {a.job_id: a for a in result}
    assert [a.job_id for a in result] == [j.id for j in case.pending if j.id in by_job]

    devices = {d.index: d for d in case.devices if usable(d)}
    slots = {i: d.slots for i, d in devices.items()}
    mem: dict[int, float] = {
        i: float("inf") if d.memory_total is None else d.memory_total for i, d in devices.items()
    }
    for r in case.reservations:
        for i in r.gpus:
            if i in devices:
                slots[i] -= 1
                mem[i] -= r.mem
    held: set[int] = set()
    holder: int | None = None
    running = len(case.reservations)
    cap = case.policy.max_running
    for j in case.pending:
        n, need = j.spec.gpus, j.spec.mem
        if cap is not None and running >= cap:
            assert j.id not in by_job
            continue
        fits_on = [
            i
            for i in devices
            if i not in held and slots[i] > 0 and (need is None or mem[i] >= need)
        ]
        if j.id in by_job:
            assert len(fits_on) >= n
            gpus = by_job[j.id].gpus
            assert sorted(gpus) == sorted(preferred(fits_on, n, slots, mem))
            for i in gpus:
                slots[i] -= 1
                mem[i] -= need or 0
            running += 1
            continue
        assert n > 0 and len(fits_on) < n, f"job {j.id} fits but was passed over"
        if holder is None and NOW - j.queued_at >= case.policy.reserve_after:
            could = [
                i
                for i, d in devices.items()
                if need is None or d.memory_total is None or d.memory_total >= need
            ]
            if len(could) >= n:
                holder = j.id
                held = set(preferred(could, n, slots, mem))


def counting(jobs: Iterator[Job], pulled: list[int]) -> Iterator[Job]:
    for j in jobs:
        pulled.append(j.id)
        yield j


def gpu_jobs_forever() -> Iterator[Job]:
    for i in itertools.count():
        # A bug would otherwise hang the run instead of failing it.
        assert i < 100_000, "plan kept reading an endless queue"
        yield job(i)


@PROPS
@given(machines(), st.integers(0, 30))
def test_plan_stops_reading_once_nothing_more_can_start(
    machine: tuple[list[Device], list[Reservation]], extra: int
) -> None:
    devices, reservations = machine
    _, free = _free_slots(devices, reservations)
    # Each job takes one slot, so the cap is reached no later than the GPUs fill up: after
    # that not even a CPU-only job could start, and plan must stop reading.
    cap = len(reservations) + min(extra, free)
    pulled: list[int] = []
    result = plan(
        counting(gpu_jobs_forever(), pulled), devices, reservations, Policy(max_running=cap), NOW
    )
    assert len(result) == cap - len(reservations)
    last = result[-1].job_id if result else -1
    assert pulled == list(range(last + 1))


def _free_slots(
    devices: Sequence[Device], reservations: Sequence[Reservation]
) -> tuple[dict[int, int], int]:
    held = Counter(i for r in reservations for i in r.gpus)
    left = {d.index: d.slots - held[d.index] for d in devices if usable(d)}
    return left, sum(max(0, n) for n in left.values())


def test_full_gpus_and_cap_reached_read_nothing() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    pulled: list[int] = []
    jobs = counting(gpu_jobs_forever(), pulled)
    assert plan(jobs, devices, reservations, Policy(max_running=2), NOW) == []
    assert pulled == []


def test_higher_priority_job_takes_the_only_free_slot() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    pending = sorted([job(10, priority=0), job(11, priority=10)], key=queue_order_key)
    assert plan(pending, devices, reservations, Policy(), NOW) == [Assignment(11, (1,))]


def test_cpu_only_job_starts_when_all_gpus_are_busy() -> None:
    devices = [Device(0)]
    reservations = [Reservation(1, (0,))]
    pending = [job(10), job(11, gpus=0), job(12)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [Assignment(11, ())]


def test_starving_big_job_holds_gpus_against_small_jobs_behind_it() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    big = job(10, gpus=2, queued_at=NOW - 301)
    small = job(11, gpus=1)
    policy = Policy(reserve_after=300)
    assert plan([big, small], devices, reservations, policy, NOW) == []
    # A CPU-only job is still welcome: it needs none of the held GPUs.
    cpu = job(12, gpus=0)
    assert plan([big, small, cpu], devices, reservations, policy, NOW) == [Assignment(12, ())]


def test_small_job_backfills_until_the_big_job_has_waited_long_enough() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    big = job(10, gpus=2, queued_at=NOW - 299)
    small = job(11, gpus=1)
    policy = Policy(reserve_after=300)
    assert plan([big, small], devices, reservations, policy, NOW) == [Assignment(11, (1,))]


def test_a_starving_job_holds_only_gpus_it_could_ever_use() -> None:
    devices = [
        Device(0, memory_total=80 * GIB),
        Device(1, memory_total=80 * GIB),
        Device(2, memory_total=16 * GIB),
        Device(3, memory_total=16 * GIB),
    ]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    big = job(10, gpus=2, mem=40 * GIB, queued_at=0.0)
    small = [job(11), job(12)]
    assert plan([big, *small], devices, reservations, Policy(), NOW) == [
        Assignment(11, (2,)),
        Assignment(12, (3,)),
    ]


def test_a_job_that_cannot_start_on_the_usable_gpus_holds_nothing() -> None:
    devices = [Device(0, foreign_processes=1), Device(1), Device(2)]
    reservations = [Reservation(1, (1,))]
    big = job(10, gpus=3, queued_at=0.0)
    assert plan([big, job(11)], devices, reservations, Policy(), NOW) == [Assignment(11, (2,))]


def test_only_the_first_starving_job_holds_gpus() -> None:
    devices = [Device(i) for i in range(4)]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    first = job(10, gpus=3, queued_at=0.0)  # holds 2, 3 and 0
    second = job(11, gpus=4, queued_at=0.0)
    assert plan([first, second, job(12)], devices, reservations, Policy(), NOW) == []
    devices.append(Device(4))
    assert plan([first, second, job(12)], devices, reservations, Policy(), NOW) == [
        Assignment(10, (2, 3, 4))
    ]


def test_jobs_spread_over_the_emptiest_gpus() -> None:
    devices = [Device(0, slots=2), Device(1, slots=2), Device(2, slots=2)]
    reservations = [Reservation(1, (0,))]
    pending = [job(10), job(11), job(12, gpus=2)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [
        Assignment(10, (1,)),
        Assignment(11, (2,)),
        Assignment(12, (0, 1)),
    ]


def test_memory_picks_the_gpu_with_room_and_ignores_removed_gpus() -> None:
    devices = [Device(0, slots=2, memory_total=40 * GIB), Device(1, slots=2, memory_total=80 * GIB)]
    reservations = [Reservation(1, (1, 7), mem=50 * GIB)]
    pending = [job(10, mem=35 * GIB), job(11, mem=35 * GIB), job(12, mem=10 * GIB)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [
        Assignment(10, (0,)),
        Assignment(12, (1,)),
    ]


def test_draining_and_foreign_gpus_are_not_used() -> None:
    devices = [
        Device(0, state=DeviceState.DRAINING),
        Device(1, foreign_processes=2),
        Device(2),
    ]
    assert plan([job(10), job(11)], devices, [], Policy(), NOW) == [Assignment(10, (2,))]


def test_why_waiting() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, memory_total=80 * GIB)]
    busy = [Reservation(1, (0,), mem=70 * GIB)]
    assert why_waiting(job(10, gpus=2), devices, busy) == "waiting for 2 free GPUs"
    assert why_waiting(job(10), devices, [*busy, Reservation(2, (1,))]) == (
        "waiting for a free GPU"
    )
    two = [Device(0, slots=2, memory_total=80 * GIB)]
    assert why_waiting(job(10, mem=20 * GIB), two, busy) == "waiting for 20.0 GiB free on 1 GPU"
    foreign = [Device(0, foreign_processes=1), Device(1)]
    assert why_waiting(job(10, gpus=2), foreign, []) == (
        "waiting for 2 usable GPUs (1 GPU in use by other processes)"
    )
    assert why_waiting(job(10, gpus=0), devices, busy).startswith("waiting for a run slot")


def test_never_fits() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, state=DeviceState.DRAINING)]
    assert never_fits(3, None, devices) == "asks for 3 GPUs but only 2 are configured"
    assert never_fits(1, None, []) == "asks for 1 GPU but none is configured"
    assert never_fits(2, None, devices) is None
    assert never_fits(0, 10**15, []) is None
    big = [Device(0, memory_total=80 * GIB), Device(1, memory_total=40 * GIB)]
    assert never_fits(1, 100 * GIB, big) == (
        "asks for 100.0 GiB per GPU but the largest GPU has 80.0 GiB"
    )
    assert never_fits(2, 60 * GIB, big) == (
        "asks for 2 GPUs with 60.0 GiB each but only 1 GPU has that much"
    )
    assert never_fits(1, 60 * GIB, big) is None
    assert never_fits(2, 60 * GIB, [Device(0), Device(1)]) is None  # sizes unknown
