"""Following a job through all its attempts: every attempt's log, in order, none skipped.

Retries that fail fast run several attempts between two looks of the follow; each must still
be sent whole, from its start, and the stream ends with the job's real state.
"""

from __future__ import annotations

from typing import Any

from test_logs import reading

from conftest import Herd

FAILS = 'echo "attempt $GPUHERD_ATTEMPT says hi"; exit 1'


def failed_thrice(daemon: Herd) -> int:
    job_id = daemon.submit("--retries", "2", FAILS)
    daemon.wait_state(job_id, "failed")
    assert daemon.job(job_id)["attempt"] == 3
    return job_id


def texts(events: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The events with each text event cut down to its attempt and text."""
    return [
        (name, (data["attempt"], data["text"]) if name == "message" else data)
        for name, data in events
    ]


def test_a_follow_from_the_first_attempt_sends_every_attempt_in_order(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = failed_thrice(daemon)
    events = daemon.client.stream(f"/jobs/{job_id}/log/follow", from_attempt=1, offset=0)
    assert texts(list(events)) == [
        ("message", (1, "attempt 1 says hi\n")),
        ("attempt", {"attempt": 2}),
        ("message", (2, "attempt 2 says hi\n")),
        ("attempt", {"attempt": 3}),
        ("message", (3, "attempt 3 says hi\n")),
        ("end", {"state": "failed"}),
    ]


def test_a_follow_of_one_earlier_attempt_ends_with_the_jobs_state(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = failed_thrice(daemon)
    events = daemon.client.stream(f"/jobs/{job_id}/log/follow", attempt=2)
    assert texts(list(events)) == [
        ("message", (2, "attempt 2 says hi\n")),
        ("end", {"state": "failed"}),
    ]


def test_log_f_prints_each_of_many_fast_retries_once_in_order(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--hold", "--retries", "4", FAILS)
    with reading(daemon, "log", "-f", str(job_id)) as follow:
        follow.noted_held(job_id)
        daemon.cli("release", str(job_id))
        out, err = follow.proc.communicate(timeout=30)
    assert follow.proc.returncode == 0
    assert out.decode().splitlines() == [f"attempt {n} says hi" for n in range(1, 6)]
    began = [f"gpuherd: job {job_id}: attempt {n} began" for n in range(2, 6)]
    assert err.decode().splitlines() == [*began, f"job {job_id}: failed (exit 1)"]
