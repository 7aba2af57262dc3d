"""Edges of `--after-fail`: what `retry` and `edit` say of a job cancelled as its --after-fail
dependency succeeded, and what a retry of both then does."""

from __future__ import annotations

from conftest import Herd, Recorder


def test_retry_of_a_job_cancelled_by_a_success_says_it_waits_for_a_failure(
    daemon: Herd, recorder: Recorder
) -> None:
    flaky = daemon.submit(
        "--",
        f"if [ -e {recorder.path('fail')} ]; then exit 3; fi",
    )
    cleanup = daemon.submit("--after-fail", str(flaky), recorder.cmd("cleanup"))
    daemon.wait_state(flaky, "succeeded")
    assert daemon.wait_state(cleanup, "cancelled")["outcome"] == "dependency_failed"
    refused = daemon.cli("retry", str(cleanup), check=False)
    assert refused.returncode != 0
    # Not "retry both": both would not run again, a second success cancels it again.
    assert refused.stderr == (
        f"gpuherd: error: job {cleanup} waits for job {flaky} to fail (--after-fail), and it "
        f"succeeded: nothing failed to act on (gpuherd retry {flaky} {cleanup} runs job "
        f"{flaky} again, and job {cleanup} only if it fails this time)\n"
    )
    assert daemon.job(cleanup)["state"] == "cancelled"
    # Nor can it be edited back (retry --hold, which an edit of an ended job points to, is
    # refused as retry is): the edit says what works instead.
    edit = daemon.cli("edit", str(cleanup), "--clear", "after_fail", check=False)
    assert edit.returncode == 1
    assert edit.stderr.startswith(
        f"gpuherd: error: job {cleanup} already ended (cancelled): job "
        f"{cleanup} waits for job {flaky} to fail (--after-fail)"
    )
    assert edit.stderr.endswith(
        f"; to run it without waiting for job {flaky}, submit its command again\n"
    )
    # As said: retried together, the waiter runs once the rerun fails.
    recorder.go("fail")
    daemon.cli("retry", str(flaky), str(cleanup))
    daemon.wait_state(flaky, "failed")
    daemon.wait_state(cleanup, "succeeded")
    assert len(recorder.lines("cleanup")) == 1
