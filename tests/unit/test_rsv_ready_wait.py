"""Starvation reservations count a job's wait from when it could first start (`reserve-after`):
not while it waited for the jobs it is `--after` (or `--after-any`, `--after-fail`), nor
through its `--retry-delay`. The store keeps that moment in `queued_at`; placement reads it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuherd.core.model import Assignment, Device, JobSpec, Outcome, Policy, Reservation
from gpuherd.core.placement import Hold, place
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.store import NewJob, Store

SUBMITTED = 1_000.0
RESERVE_AFTER = 300.0
POLICY = Policy(reserve_after=RESERVE_AFTER)
TWO_GPUS = [Device(0), Device(1)]


def spec(gpus: int = 1, **kw: object) -> JobSpec:
    return JobSpec(command="true", cwd="/tmp", env={}, gpus=gpus, **kw)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "herd.db")
    yield s
    s.close()


def run(store: Store, job_id: int, at: float) -> None:
    store.update_job(job_id, at, "start", JobState.RUNNING, started_at=at, assigned=(0,))


def succeed(store: Store, job_id: int, at: float) -> None:
    outcome = Outcome(OutcomeKind.EXIT, exit_code=0)
    store.update_job(job_id, at, "succeed", JobState.SUCCEEDED, ended_at=at, outcome=outcome)


def placed(store: Store, busy: int, now: float) -> tuple[list[Assignment], Hold | None]:
    """A pass over the store's queue, job `busy` running on GPU 0 of two."""
    out = place(store.queued_ready(), TWO_GPUS, [Reservation(busy, (0,))], POLICY, now)
    return out.starts, out.hold


def test_a_job_after_a_long_one_waits_reserve_after_from_its_end_before_it_holds(
    store: Store,
) -> None:
    # Job 2 runs 6 hours on GPU 1 (job 1 has GPU 0); job 3 (2 GPUs) is --after it; job 4
    # (1 GPU) could backfill GPU 1 once job 2 ends.
    busy, dep, big, small = store.add_jobs(
        [NewJob(spec()), NewJob(spec()), NewJob(spec(2, after=(2,))), NewJob(spec())], SUBMITTED
    )
    run(store, busy, SUBMITTED)
    run(store, dep, SUBMITTED)
    ended = SUBMITTED + 6 * 3600
    succeed(store, dep, ended)

    # Ready for 10 s only (its 6 hours waiting for job 2 do not count): it holds nothing,
    # and GPU 1 goes to the job behind it.
    assert placed(store, busy, ended + 10) == ([Assignment(small, (1,))], None)
    # Ready for reserve-after: it holds the GPUs against the job behind it.
    starts, hold = placed(store, busy, ended + RESERVE_AFTER)
    assert starts == []
    assert hold is not None and hold.job_id == big


def test_a_job_waiting_for_two_jobs_counts_from_the_later_end(store: Store) -> None:
    a, b, waiter = store.add_jobs(
        [NewJob(spec()), NewJob(spec()), NewJob(spec(2, after_any=(1, 2)))], SUBMITTED
    )
    for dep, end in ((a, SUBMITTED + 500), (b, SUBMITTED + 900)):
        run(store, dep, SUBMITTED)
        succeed(store, dep, end)
    assert store.get_job(waiter).queued_at == SUBMITTED + 900  # type: ignore[union-attr]


def test_a_job_whose_retry_delay_ends_counts_from_its_end(store: Store) -> None:
    (job,) = store.add_jobs([NewJob(spec(2))], SUBMITTED)
    run(store, job, SUBMITTED)
    failed, due = SUBMITTED + 100, SUBMITTED + 700
    store.update_job(job, failed, "retry", JobState.QUEUED, release_at=due)
    assert store.end_retry_waits(due + 5) == [job]
    assert store.get_job(job).queued_at == due  # type: ignore[union-attr]


def test_an_edit_that_drops_an_unmet_dependency_counts_from_the_edit(store: Store) -> None:
    _, waiter, ready = store.add_jobs(
        [NewJob(spec()), NewJob(spec(2, after=(1,))), NewJob(spec(2))], SUBMITTED
    )
    edited_at = SUBMITTED + 400
    store.replace_deps(waiter, spec(2), edited_at)
    store.replace_deps(ready, spec(2), edited_at)  # waited for nothing: its wait goes on
    jobs = store.get_jobs([waiter, ready])
    assert (jobs[waiter].queued_at, jobs[ready].queued_at) == (edited_at, SUBMITTED)
