"""Placement of a long queue read in a window: CPU-only jobs behind it, and honest reasons.

The engine reads at most SCAN_LIMIT queued jobs per pass; a CPU-only job behind 2,000 GPU
jobs that could not start stayed queued with the CPU free, and was said to be "starting".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from test_placement import NOW, PROPS, Case, cases, job

from gpuherd.core.caps import Offering
from gpuherd.core.model import Assignment, Device, Job, JobSpec, Policy, Reservation
from gpuherd.core.placement import plan
from gpuherd.core.reasons import why_waiting
from gpuherd.engine_scan import Scan
from gpuherd.store import NewJob, Store

BUSY = [Reservation(100 + i, (i,)) for i in range(4)]
FOUR = [Device(i) for i in range(4)]


def test_a_cpu_only_job_read_apart_starts_behind_gpu_jobs_that_cannot() -> None:
    window = [job(i) for i in range(1, 6)]  # every GPU is busy: none of these starts
    assert plan(window, FOUR, BUSY, Policy(), NOW, cpu_only=[job(9, gpus=0)]) == [Assignment(9, ())]
    # With GPUs open, a window read to its end (nothing in it fits) goes on to them too.
    one_busy = BUSY[:1]
    big = [job(i, gpus=4) for i in range(1, 6)]
    assert plan(big, FOUR, one_busy, Policy(), NOW, cpu_only=[job(9, gpus=0)]) == [
        Assignment(9, ())
    ]


def test_a_cpu_only_job_in_both_streams_starts_once() -> None:
    cpu = job(2, gpus=0)
    placed = plan([job(1), cpu, job(3)], FOUR, [], Policy(), NOW, cpu_only=[cpu, job(4, gpus=0)])
    assert placed == [
        Assignment(1, (0,)),
        Assignment(2, ()),
        Assignment(3, (1,)),
        Assignment(4, ()),
    ]


@PROPS
@given(cases())
def test_reading_cpu_only_jobs_apart_changes_nothing_on_a_whole_queue(case: Case) -> None:
    # The CPU-only stream repeats jobs of the queue: those placed are left out, those passed
    # over for a limit are passed over again (the limits only shrink in a pass).
    args = (case.devices, case.reservations, case.policy, NOW)
    alone = plan(case.pending, *args, host_free=case.host_free)
    cpu = [j for j in case.pending if j.spec.gpus == 0]
    apart = plan(case.pending, *args, host_free=case.host_free, cpu_only=cpu)
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


def offer() -> Offering:
    return Offering({}, {}, {}, lambda: frozenset(), NOW - 300)


def scan_plan(scan: Scan, reservations: list[Reservation]) -> list[Assignment]:
    with scan.reading(offer()) as (window, cpu_only, _):
        return plan(window, FOUR, reservations, Policy(), NOW, cpu_only=cpu_only)


def spec(gpus: int) -> JobSpec:
    return JobSpec("true", "/", gpus=gpus)


def test_scan_finds_cpu_only_jobs_past_its_window(store: Store) -> None:
    gpu_ids = store.add_jobs([NewJob(spec(1)) for _ in range(5)], now=NOW)
    (cpu_id,) = store.add_jobs([NewJob(spec(0))], now=NOW)
    scan = Scan(store, limit=3)
    assert scan_plan(scan, BUSY) == [Assignment(cpu_id, ())]
    # The GPUs were taken: the pass stopped at once, which says nothing of the GPU jobs
    # behind (their reason is the busy GPUs), and the CPU-only stream read the CPU job.
    assert scan.ahead(job_of(store, gpu_ids[-1]), 100) is None
    assert scan.ahead(job_of(store, cpu_id), 100) is None


def test_scan_says_how_many_stand_before_a_job_it_did_not_reach(store: Store) -> None:
    big = store.add_jobs([NewJob(spec(4)) for _ in range(5)], now=NOW)
    (small,) = store.add_jobs([NewJob(spec(1))], now=NOW)
    scan = Scan(store, limit=3)
    assert scan_plan(scan, BUSY[:1]) == []  # 3 GPUs free: no 4-GPU job fits
    jobs = store.get_jobs([*big, small])  # as they are now: their reasons are read after
    assert scan.ahead(jobs[small], 100) == 5
    assert scan.ahead(jobs[small], 4) == 4  # counted no further than asked
    assert scan.ahead(jobs[big[2]], 100) is None  # read (the third, the window's end)
    assert scan.ahead(jobs[big[3]], 100) == 3
    # The next pass reads them all: nobody is passed over any more.
    assert scan_plan(Scan(store, limit=10), BUSY[:1]) == [Assignment(small, (1,))]


def job_of(store: Store, job_id: int) -> Job:
    found = store.get_job(job_id)
    assert found is not None
    return found
