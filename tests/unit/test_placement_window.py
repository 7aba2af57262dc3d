"""Placement of a long queue read in a window: the jobs of each GPU count behind it, and
honest reasons.

The engine reads at most SCAN_LIMIT queued jobs per pass; a CPU-only job behind 2,000 GPU
jobs that could not start stayed queued with the CPU free, and was said to be "starting";
a 1-GPU job behind 2,000 4-GPU jobs stayed queued with 3 GPUs free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given
from test_placement import NOW, PROPS, Case, cases, job

from gpuherd.core.caps import Offering, pass_offering
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
from gpuherd.core.placement import Hold, cpu_slots_left, open_gpus, place, plan
from gpuherd.core.reasons import why_waiting
from gpuherd.engine_scan import Scan
from gpuherd.store import NewJob, Store

BUSY = [Reservation(100 + i, (i,)) for i in range(4)]
FOUR = [Device(i) for i in range(4)]
BIG = [job(i, gpus=4) for i in range(1, 6)]
"""A window of jobs that cannot start with one GPU busy."""


def by_shape(jobs: Sequence[Job]) -> Callable[[int], list[Job]]:
    """`plan`'s `behind`: the jobs of each GPU count, in dispatch order."""
    ordered = sorted(jobs, key=queue_order_key)
    return lambda gpus: [j for j in ordered if j.spec.gpus == gpus]


def test_a_cpu_only_job_read_apart_starts_behind_gpu_jobs_that_cannot() -> None:
    window = [job(i) for i in range(1, 6)]  # every GPU is busy: none of these starts
    behind = by_shape([job(9, gpus=0)])
    assert plan(window, FOUR, BUSY, Policy(), NOW, behind=behind) == [Assignment(9, ())]
    # With GPUs open, a window read to its end (nothing in it fits) goes on to them too.
    assert plan(BIG, FOUR, BUSY[:1], Policy(), NOW, behind=behind) == [Assignment(9, ())]


def test_a_gpu_job_behind_a_window_of_bigger_jobs_starts() -> None:
    behind = by_shape([job(9, gpus=1), job(10, gpus=4), job(11, gpus=2)])
    assert plan(BIG, FOUR, BUSY[:1], Policy(), NOW, behind=behind) == [
        Assignment(9, (1,)),
        Assignment(11, (2, 3)),
    ]
    # Only the counts that fit the GPUs open are read at all, and a count no more once
    # too few are left.
    asked: list[int] = []

    def counted(gpus: int) -> list[Job]:
        asked.append(gpus)
        return [job(20 + 10 * gpus + i, gpus=gpus) for i in range(3)]

    placed = plan(BIG, FOUR, BUSY[:2], Policy(), NOW, behind=counted)
    assert [a.job_id for a in placed] == [20, 21, 22, 30, 31]
    assert sorted(asked) == [0, 1, 2]
    assert plan(BIG, FOUR, BUSY, Policy(), NOW, behind=counted, cpu_jobs_waiting=False) == []
    assert sorted(asked) == [0, 1, 2]  # every GPU busy, no CPU-only job wanted: none read


def test_a_job_behind_the_window_does_not_take_gpus_held_for_an_older_blocked_job() -> None:
    starving = [job(1, gpus=4, queued_at=NOW - 1000)]  # waited past reserve-after: it holds
    behind = by_shape([job(9, gpus=1), job(10, gpus=0)])
    assert plan(starving, FOUR, BUSY[:1], Policy(), NOW, behind=behind) == [Assignment(10, ())]
    # A starving job read behind the window holds nothing (in the window it would hold 3
    # GPUs): the jobs after it take every slot left.
    exclusive = replace(
        job(8, gpus=3, queued_at=NOW - 1000), spec=JobSpec("x", "/", gpus=3, exclusive=True)
    )
    ones = [job(20 + i) for i in range(7)]
    two_slots = [Device(i, slots=2) for i in range(4)]
    half = [Reservation(100, (0,)), Reservation(101, (1,))]
    assert len(plan([exclusive, *ones], two_slots, half, Policy(), NOW)) == 1
    never = [job(i, gpus=5) for i in range(1, 4)]
    behind = by_shape([exclusive, *ones])
    assert len(plan(never, two_slots, half, Policy(), NOW, behind=behind)) == 6


def test_jobs_behind_the_window_start_in_priority_order_across_counts() -> None:
    behind = by_shape(
        [
            job(10, gpus=1),
            job(11, gpus=2, priority=5),
            job(12, gpus=0, priority=1),
            job(13, gpus=1),
        ]
    )

    def placed(max_running: int) -> list[int]:
        policy = Policy(max_running=max_running)
        return [a.job_id for a in plan(BIG, FOUR, BUSY[:1], policy, NOW, behind=behind)]

    assert placed(3) == [11, 12]  # two may start: the highest priorities, whatever count
    assert placed(4) == [11, 12, 10]  # then in queue order: 10 before 13
    assert placed(9) == [11, 12, 10]  # 13 finds no GPU left


def test_a_job_in_the_window_and_behind_it_starts_once() -> None:
    cpu = job(2, gpus=0)
    one = job(5, gpus=1)
    behind = by_shape([cpu, job(4, gpus=0), one])
    placed = plan([job(1), cpu, job(3), one], FOUR, [], Policy(), NOW, behind=behind)
    assert placed == [
        Assignment(1, (0,)),
        Assignment(2, ()),
        Assignment(3, (1,)),
        Assignment(5, (2,)),
        Assignment(4, ()),
    ]


@PROPS
@given(cases())
def test_reading_each_gpu_count_apart_changes_nothing_on_a_whole_queue(case: Case) -> None:
    # The streams repeat jobs of the queue: those placed are left out, those passed over
    # for a limit or for room are passed over again (they only shrink in a pass).
    args = (case.devices, case.reservations, case.policy, NOW)
    alone = plan(case.pending, *args, host_free=case.host_free)
    apart = plan(case.pending, *args, host_free=case.host_free, behind=by_shape(case.pending))
    assert apart == alone


def test_a_job_placement_did_not_read_says_how_many_wait_ahead() -> None:
    one = [Device(0)]

    def counted(n: int | None) -> Callable[[int], int | None]:
        return lambda most: n if n is None else min(n, most)

    assert why_waiting(job(9, gpus=0), one, [], ahead=counted(2100)) == (
        "waiting: 2,100 jobs ahead in the queue"
    )
    assert why_waiting(job(9), one, [], ahead=counted(10**6)) == (
        "waiting: over 10,000 jobs ahead in the queue"
    )
    assert why_waiting(job(9, gpus=0), one, [], ahead=counted(None)) == "starting"
    assert why_waiting(job(9), one, [], ahead=counted(None)).startswith("waiting for its turn")
    # A true cause comes first: the count is asked for only when nothing else holds it back.
    asked: list[int] = []
    busy = [Reservation(1, (0,))]
    assert why_waiting(job(9), one, busy, ahead=asked.append) == "waiting for a free GPU"
    assert asked == []


# ---- the engine's window over a real store --------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "herd.db")
    yield store
    store.close()


def offer(reservations: list[Reservation]) -> Offering:
    return Offering({}, {}, {}, partial(open_gpus, FOUR, reservations, Policy()), NOW - 300)


def scan_plan(
    scan: Scan, reservations: list[Reservation], host_free: int | None = None
) -> list[Assignment]:
    with scan.reading(offer(reservations)) as (window, behind, _):
        return plan(window, FOUR, reservations, Policy(), NOW, host_free=host_free, behind=behind)


def spec(gpus: int, ram: int | None = None) -> JobSpec:
    return JobSpec("true", "/", gpus=gpus, ram=ram)


def test_scan_finds_cpu_only_jobs_past_its_window(store: Store) -> None:
    gpu_ids = store.add_jobs([NewJob(spec(1)) for _ in range(5)], now=NOW)
    (cpu_id,) = store.add_jobs([NewJob(spec(0))], now=NOW)
    scan = Scan(store, limit=3)
    assert scan_plan(scan, BUSY) == [Assignment(cpu_id, ())]
    # The GPUs were taken: the pass stopped at once, which says nothing of the GPU jobs
    # behind (their reason is the busy GPUs), and the CPU-only stream read the CPU job.
    assert scan.ahead(job_of(store, gpu_ids[-1]), 100) is None
    assert scan.ahead(job_of(store, cpu_id), 100) is None


def test_scan_reads_the_jobs_of_each_gpu_count_past_its_window(store: Store) -> None:
    # 2-GPU jobs that ask for more host memory than there is fill the window.
    greedy = store.add_jobs([NewJob(spec(2, ram=10**15)) for _ in range(7)], now=NOW)
    (small,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    scan = Scan(store, limit=3)
    assert scan_plan(scan, BUSY[:1], host_free=10**12) == [Assignment(small, (1,))]
    jobs = store.get_jobs(greedy)
    assert scan.ahead(jobs[greedy[2]], 100) is None  # read (the third, the window's end)
    assert scan.ahead(jobs[greedy[5]], 100) is None  # read behind it, in its count's stream
    assert scan.ahead(jobs[greedy[6]], 100) == 6  # past that stream's depth too


def test_scan_says_how_many_stand_before_a_job_it_did_not_reach(store: Store) -> None:
    big = store.add_jobs([NewJob(spec(4)) for _ in range(4)], now=NOW)  # (3 GPUs are free)
    greedy2 = store.add_jobs([NewJob(spec(2, ram=10**15)) for _ in range(4)], now=NOW)
    greedy = store.add_jobs([NewJob(spec(1, ram=10**15)) for _ in range(4)], now=NOW)
    (small, two) = store.add_jobs([NewJob(spec(1)), NewJob(spec(2))], now=NOW)
    scan = Scan(store, limit=3)
    assert scan_plan(scan, BUSY[:1], host_free=10**12) == [Assignment(two, (1, 2))]
    jobs = store.get_jobs([*big, *greedy2, *greedy, small])  # (reasons are read after)
    assert scan.ahead(jobs[small], 100) == 12
    assert scan.ahead(jobs[small], 4) == 4  # counted no further than asked
    assert scan.ahead(jobs[greedy[2]], 100) is None  # read (the third of its stream)
    assert scan.ahead(jobs[greedy[3]], 100) == 11
    assert scan.ahead(jobs[big[3]], 100) is None  # (not read: it waits for GPUs)
    # The next pass reads them all: nobody is passed over any more.
    assert scan_plan(Scan(store, limit=10), BUSY[:1], host_free=10**12) == [
        Assignment(small, (1,)),
        Assignment(two, (2, 3)),
    ]


def passed_reading(
    scan: Scan, reservations: list[Reservation]
) -> tuple[list[Assignment], set[int]]:
    """A pass's starts and the ids it read."""
    with scan.reading(offer(reservations)) as (window, behind, seen):
        starts = plan(window, FOUR, reservations, Policy(), NOW, behind=behind, held=scan.held)
        return starts, set(seen)


def test_jobs_asking_for_more_gpus_than_are_open_are_read_only_to_hold(store: Store) -> None:
    # Each was read and passed over, every pass: 2,100 queued 4-GPU jobs with 3 GPUs
    # free took 12-20 ms a pass.
    big = store.add_jobs([NewJob(spec(4)) for _ in range(5)], now=NOW)
    (small,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    scan = Scan(store, limit=3)
    assert passed_reading(scan, BUSY[:1]) == ([Assignment(small, (1,))], {small})
    jobs = store.get_jobs(big)
    assert scan.ahead(jobs[big[4]], 100) is None  # (it waits for GPUs, not its turn)
    assert why_waiting(jobs[big[4]], FOUR, BUSY[:1], Policy()) == "waiting for 4 free GPUs"


def test_a_starving_job_asking_for_more_gpus_than_are_open_holds_them(store: Store) -> None:
    pinned = JobSpec("true", "/", gpus=4, only_gpus=(0, 1, 2, 3))
    big = store.add_jobs([NewJob(pinned) for _ in range(5)], now=NOW - 1000)
    (small,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    eight = [Device(i) for i in range(8)]
    busy = [Reservation(100 + i, (i,)) for i in range(5)]
    offering = Offering({}, {}, {}, partial(open_gpus, eight, busy, Policy()), NOW - 300)
    scan = Scan(store, limit=3)
    with scan.reading(offering) as (window, behind, seen):
        placed = place(window, eight, busy, Policy(), NOW, behind=behind, held=scan.held)
    # The first holds GPUs 0-3 (busy: 3 are open, 5-7), no other 4-GPU job is read after
    # it (they could only have held), and the 1-GPU job behind them starts.
    assert placed.hold == Hold(big[0], frozenset({0, 1, 2, 3}))
    assert (placed.starts, set(seen)) == ([Assignment(small, (5,))], {big[0], small})


def job_of(store: Store, job_id: int) -> Job:
    found = store.get_job(job_id)
    assert found is not None
    return found


def cpu_capped_pass(
    scan: Scan, cpu_jobs: int, running: list[Reservation]
) -> tuple[list[Assignment], set[int]]:
    """A pass as the engine makes it under `cpu-jobs` (the starts, and the ids it read)."""
    policy = Policy(cpu_jobs=cpu_jobs)
    cpu_jobs = cpu_slots_left(running, policy) != 0
    with scan.reading(offer(running), cpu_jobs) as (window, behind, seen):
        starts = plan(window, FOUR, running, policy, NOW, behind=behind, cpu_full=scan.cpu_full)
        return starts, set(seen)


def test_a_pass_with_every_cpu_slot_taken_reads_no_cpu_only_job(store: Store) -> None:
    # Each was built and passed over, every pass, while a GPU was open: 1,500 queued
    # `--gpus 0` jobs ran at ~90 jobs/s, a third of the daemon's time in these reads.
    cpu = store.add_jobs([NewJob(spec(0)) for _ in range(5)], now=NOW)
    (gpu,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    scan = Scan(store, limit=3)
    starts, read = cpu_capped_pass(scan, 1, [Reservation(99, ())])
    assert (starts, read) == ([Assignment(gpu, (0,))], {gpu})
    jobs = store.get_jobs(cpu)
    assert scan.ahead(jobs[cpu[-1]], 100) is None  # (it waits for a CPU slot, not its turn)
    assert why_waiting(jobs[cpu[-1]], FOUR, [Reservation(99, ())], Policy(cpu_jobs=1)) == (
        "waiting for a CPU slot (1 running: config cpu-jobs)"
    )


def test_the_window_stops_reading_cpu_only_jobs_once_their_slots_are_given(store: Store) -> None:
    cpu = store.add_jobs([NewJob(spec(0)) for _ in range(6)], now=NOW)
    (gpu,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    starts, read = cpu_capped_pass(Scan(store, limit=10), 2, [])
    assert starts == [Assignment(cpu[0], ()), Assignment(cpu[1], ()), Assignment(gpu, (0,))]
    assert read <= {cpu[0], cpu[1], cpu[2], gpu}  # (the next one's read ahead, at most)
    # Without the cap every job is read, as before, and all of them start.
    starts, read = cpu_capped_pass(Scan(store, limit=10), 10, [])
    assert len(starts) == 7 and read == {*cpu, gpu}


def test_a_queue_of_cpu_only_jobs_alone_is_read_no_further_than_the_slots_given(
    store: Store,
) -> None:
    cpu = store.add_jobs([NewJob(spec(0)) for _ in range(6)], now=NOW)
    starts, read = cpu_capped_pass(Scan(store, limit=10), 2, [])
    assert starts == [Assignment(cpu[0], ()), Assignment(cpu[1], ())]
    assert read == {cpu[0], cpu[1]}
    assert cpu_capped_pass(
        Scan(store, limit=10), 2, [Reservation(98, ()), Reservation(99, ())]
    ) == (
        [],
        set(),
    )


def test_jobs_asking_for_more_gpus_than_are_enabled_are_not_read(store: Store) -> None:
    # Starving, but with a GPU drained none of them can reserve GPUs (capacity.Pass.hold):
    # each was read and passed over, every pass, for as long as the GPU was drained.
    big = store.add_jobs([NewJob(spec(4)) for _ in range(5)], now=NOW - 1000)
    (small,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    drained = [*FOUR[:3], Device(3, state=DeviceState.DRAINING)]
    offering = pass_offering({}, {}, drained, [], Policy(), NOW)
    scan = Scan(store, limit=3)
    with scan.reading(offering) as (window, behind, seen):
        placed = place(window, drained, [], Policy(), NOW, behind=behind, held=scan.held)
    assert (placed.starts, placed.hold, set(seen)) == ([Assignment(small, (0,))], None, {small})
    assert scan.ahead(store.get_jobs(big)[big[4]], 100) is None  # (it waits for GPUs)
