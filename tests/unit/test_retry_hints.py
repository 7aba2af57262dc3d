"""What submit and retry say to run again a job cancelled as jobs it waits for ended badly
(core/lifecycle: cancelled_at_once, retry_refused): a command naming every job to rerun."""

from __future__ import annotations

from gpuherd.core.lifecycle import Rerun, cancelled_at_once, retry_refused
from gpuherd.core.states import JobState
from gpuherd.service import Submitted

FAILED, CANCELLED, SUCCEEDED = JobState.FAILED, JobState.CANCELLED, JobState.SUCCEEDED


def test_one_failed_dependency_keeps_the_short_hint() -> None:
    assert cancelled_at_once([7], 6, FAILED, Rerun((6,))) == cancelled_at_once([7], 6, FAILED)
    assert cancelled_at_once([7], 6, FAILED).endswith("(gpuherd retry 6 7 runs both again)")
    assert retry_refused(7, 6, FAILED, Rerun((6,))) == (
        "job 7 waits for job 6, which ended (failed): retry both (gpuherd retry 6 7)"
    )
    said = cancelled_at_once([8, 9], 5, FAILED, Rerun((5,)))
    assert said.endswith("(gpuherd retry 5 8-9 runs them all again)")


def test_every_dependency_that_ended_badly_is_named() -> None:
    """Of a job 5 `--after 3,4` with both failed: `retry 3 5` left job 4 failed."""
    assert cancelled_at_once([5], 3, FAILED, Rerun((3, 4))) == (
        "job 5 is cancelled at once: job 3, which it waits for, already failed "
        "(gpuherd retry 3 4 5 runs them all again)"
    )
    assert retry_refused(5, 3, FAILED, Rerun((3, 4))) == (
        "job 5 waits for job 3, which ended (failed): retry them all (gpuherd retry 3 4 5)"
    )


def test_a_chain_keeps_its_wording() -> None:
    chain = Rerun((18, 19), cause=(18, FAILED))
    assert cancelled_at_once([20], 19, CANCELLED, chain).endswith(
        "(gpuherd retry 18 19 20 runs them all again)"
    )
    assert retry_refused(20, 19, CANCELLED, chain) == (
        "job 20 waits for job 19, which ended (cancelled) as one it waited for did: retry them "
        "all (gpuherd retry 18 19 20)"
    )


def test_a_chain_cancelled_by_a_success_says_nothing_failed() -> None:
    chain = Rerun((12, 13), cause=(12, SUCCEEDED), succeeded=(12,))
    runs = (
        "gpuherd retry 12 13 14 runs job 12 again, and the jobs waiting for it only if it "
        "fails this time"
    )
    assert cancelled_at_once([14], 13, CANCELLED, chain).endswith(f"({runs})")
    assert retry_refused(14, 13, CANCELLED, chain) == (
        "job 14 waits for job 13, which ended (cancelled) as job 12, which it waited for to "
        f"fail (--after-fail), succeeded: retry them all ({runs})"
    )
    # Waiting directly for the success, as before.
    assert retry_refused(13, 12, SUCCEEDED) == retry_refused(
        13, 12, SUCCEEDED, Rerun((12,), None, (12,))
    )
    assert retry_refused(13, 12, SUCCEEDED).endswith(
        "(gpuherd retry 12 13 runs job 12 again, and job 13 only if it fails this time)"
    )


def test_jobs_cancelled_by_one_job_are_told_apart_by_what_else_to_retry() -> None:
    """Jobs 8 and 9 both name job 5, which failed; job 9 also waits for job 6, failed too."""
    cancelled = {8: (5, FAILED), 9: (5, FAILED)}
    told = Submitted([8, 9], cancelled, {8: Rerun((5,)), 9: Rerun((5, 6))}).warnings()
    assert [line.split("(")[1] for line in told] == [
        "gpuherd retry 5 8 runs both again)",
        "gpuherd retry 5 6 9 runs them all again)",
    ]
