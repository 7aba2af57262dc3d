"""A retry by hand gives a job its --retries anew: the automatic retries count from the
attempt it starts (core/retry_budget.py, lifecycle.put_back_by_hand)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuherd.core.lifecycle import Ended, after_attempt, put_back_by_hand
from gpuherd.core.model import Job, JobSpec, Outcome
from gpuherd.core.retry_budget import retries_left, retries_to_come, retry_over_budget
from gpuherd.core.states import JobState, OutcomeKind

FAILED = Outcome(OutcomeKind.EXIT, 1)
OOM = Outcome(OutcomeKind.CUDA_OOM, 1, message="CUDA out of memory")


def job(retries: int, attempt: int, state: JobState = JobState.RUNNING, **more: object) -> Job:
    spec = JobSpec(command="exit 1", cwd="/tmp", retries=retries, oom_retry=True)
    return Job(id=7, spec=spec, state=state, attempt=attempt, **more)  # type: ignore[arg-type]


def retried_by_hand(ended: Job) -> Job:
    """The job as a retry by hand leaves it: queued, its budget counted from its next attempt."""
    changes = put_back_by_hand(ended)
    return replace(ended, state=JobState.QUEUED, retries_from=changes["retries_from"])


def fails(running: Job, outcome: Outcome = FAILED) -> JobState:
    return after_attempt(running, Ended(1, None), outcome).state


def test_a_retry_by_hand_counts_the_retries_from_the_attempt_it_starts() -> None:
    # --retries 1: attempts 1 and 2 fail, the job fails; a retry by hand runs 3, then 4.
    assert fails(job(1, 1)) is JobState.QUEUED
    assert fails(job(1, 2)) is JobState.FAILED
    again = retried_by_hand(job(1, 2, JobState.FAILED))
    assert again.retries_from == 3
    assert retries_to_come(again) == 1
    assert fails(replace(again, state=JobState.RUNNING, attempt=3)) is JobState.QUEUED
    assert fails(replace(again, state=JobState.RUNNING, attempt=4)) is JobState.FAILED


def test_a_retry_by_hand_gives_the_out_of_memory_retries_anew_too() -> None:
    again = retried_by_hand(job(0, 3, JobState.FAILED))  # its 2 OOM retries used
    assert retries_left(replace(again, attempt=4), OOM) == 2
    assert retries_left(replace(again, attempt=6), OOM) == 0


def test_a_job_never_retried_by_hand_counts_from_its_first_attempt() -> None:
    assert job(2, 1).retries_from == 1
    assert [retries_left(job(2, n)) for n in (1, 2, 3)] == [2, 1, 0]


@pytest.mark.parametrize(
    ("state", "attempt", "left"),
    [
        (JobState.QUEUED, 0, 2),  # its first attempt next: all of them after it
        (JobState.RUNNING, 1, 2),
        (JobState.QUEUED, 1, 1),  # waiting to retry: one more after that retry
        (JobState.RUNNING, 3, 0),
        (JobState.FAILED, 3, None),  # ended: a retry by hand gives them anew
    ],
)
def test_the_retries_to_come(state: JobState, attempt: int, left: int | None) -> None:
    assert retries_to_come(job(2, attempt, state)) == left


def test_an_edit_lowering_retries_under_a_retry_waiting_says_it_still_runs() -> None:
    waiting = job(2, 1, JobState.QUEUED, outcome=FAILED)
    assert retry_over_budget(waiting, replace(waiting.spec, retries=1)) is None
    said = retry_over_budget(waiting, replace(waiting.spec, retries=0))
    assert said == "the retry it waits for still runs: gpuherd kill 7 cancels it"
    put_back = job(2, 1, JobState.HELD, retries_from=2)  # by `retry --hold`: no outcome
    assert retry_over_budget(put_back, replace(put_back.spec, retries=0)) is None
