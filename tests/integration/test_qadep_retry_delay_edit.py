"""`edit --retry-delay` of a job waiting to retry: its wait counts from its attempt's end with
the new delay, as it did with the old one. Before, the wait kept the old delay's end: `ls`
said `retrying at 03:34:48 (--retry-delay 5s)` (the time of the old 10m, the new delay's
name), and a delay cleared or shortened still had the job wait out the old one."""

from __future__ import annotations

import time
from typing import Any

from conftest import Herd, wait_for


def waiting_to_retry(herd: Herd, job_id: int) -> dict[str, Any]:
    return dict(
        wait_for(
            lambda: (
                (job := herd.job(job_id))["attempt"] == 1
                and job["state"] == "queued"
                and job["retry_at"] is not None
                and job
            ),
            what=f"job {job_id}'s retry to wait",
        )
    )


def test_a_new_delay_moves_the_retry_from_the_attempts_end(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    ended = waiting_to_retry(daemon, job_id)["attempts"][-1]["ended_at"]
    answer = daemon.cli("edit", str(job_id), "--retry-delay", "2h").stdout
    assert answer.startswith(f"job {job_id}: edited (retry_delay 1h -> 2h, retrying at ")
    job = daemon.job(job_id)
    assert job["state"] == "queued"
    assert abs(job["retry_at"] - (ended + 7200)) < 1e-3  # was the old hour's end
    assert job["reason"].endswith(" (--retry-delay 2h)")


def test_a_delay_cleared_lets_the_retry_start_now(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    waiting_to_retry(daemon, job_id)
    answer = daemon.cli("edit", str(job_id), "--clear", "retry_delay").stdout
    assert answer == f"job {job_id}: edited (retry_delay 1h -> none, no longer waits to retry)\n"
    done = daemon.wait_state(job_id, "failed", timeout=30)  # was queued, for the hour
    assert done["attempt"] == 2


def test_a_delay_shortened_to_one_over_lets_the_retry_start_now(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    ended = waiting_to_retry(daemon, job_id)["attempts"][-1]["ended_at"]
    wait_for(lambda: time.time() > ended + 1, what="1s to pass since the attempt ended")
    answer = daemon.cli("edit", str(job_id), "--retry-delay", "1s").stdout
    assert answer.endswith("(retry_delay 1h -> 1s, no longer waits to retry)\n")
    assert daemon.wait_state(job_id, "failed", timeout=30)["attempt"] == 2


def test_a_held_job_keeps_no_wait_to_move(shared_daemon: Herd) -> None:
    """`hold` ends the wait (release runs it at once): an edit of its delay is only that."""
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    waiting_to_retry(daemon, job_id)
    daemon.cli("hold", str(job_id))
    answer = daemon.cli("edit", str(job_id), "--retry-delay", "2h").stdout
    assert answer == f"job {job_id}: edited (retry_delay 1h -> 2h)\n"
    assert daemon.job(job_id)["state"] == "held"
