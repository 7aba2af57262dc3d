"""A job's run time leaves its paused intervals out (core/run_time.py)."""

from __future__ import annotations

from gpuherd.core.run_time import pauses, run_time_text, timeout_at


def test_pauses_count_this_attempts_closed_intervals_and_the_open_one() -> None:
    events = [
        (5.0, "pause"),  # an earlier attempt's: before this one's start
        (6.0, "resume"),
        (12.0, "pause"),
        (13.0, "pause"),  # a second pause of a paused job changes nothing
        (15.0, "resume"),
        (16.0, "resume"),  # nor a second resume
        (20.0, "pause"),
    ]
    assert pauses(events, since=10.0) == (3.0, 20.0)
    assert pauses(events, since=10.0, until=24.0) == (7.0, None)  # ended while paused
    assert pauses([], since=10.0) == (0.0, None)


def test_a_paused_jobs_time_stands_still_and_goes_on_once_resumed() -> None:
    job = {"state": "paused", "started_at": 100.0, "ended_at": None}
    paused = {**job, "paused_seconds": 2.0, "paused_at": 110.0}
    assert run_time_text(paused, now=150.0) == run_time_text(paused, now=110.0) == "8.0s"
    resumed = {**job, "state": "running", "paused_seconds": 42.0, "paused_at": None}
    assert run_time_text(resumed, now=160.0) == "18.0s"
    assert run_time_text(resumed, now=160.0, paused_too=True) == "18.0s (and 42.0s paused)"


def test_a_finished_jobs_time_leaves_its_pauses_out() -> None:
    job = {"state": "killed", "started_at": 100.0, "ended_at": 200.0, "paused_seconds": 90.0}
    assert run_time_text(job, now=1000.0) == "10.0s"
    assert run_time_text(job, now=1000.0, paused_too=True) == "10.0s (and 1m30s paused)"


def test_a_view_without_pauses_shows_the_time_since_the_start() -> None:
    """From a daemon that does not count pauses (no `paused_seconds`), and never paused."""
    assert run_time_text({"state": "running", "started_at": 100.0}, now=130.0) == "30.0s"
    assert run_time_text({"state": "queued", "started_at": 100.0}, now=130.0) == ""
    never = {"state": "running", "started_at": 100.0, "paused_seconds": 0.0, "paused_at": None}
    assert run_time_text(never, now=130.0, paused_too=True) == "30.0s"


def test_a_running_jobs_timeout_is_due_after_its_start_its_pauses_and_the_timeout() -> None:
    job = {"state": "running", "started_at": 100.0, "paused_seconds": 30.0, "timeout": 60.0}
    assert timeout_at(job) == 190.0
    assert timeout_at({**job, "paused_seconds": None}) == 160.0  # (an older daemon's view)
    assert timeout_at({**job, "state": "paused"}) is None  # its timeout stands still
    assert timeout_at({**job, "state": "succeeded"}) is None
    assert timeout_at({**job, "timeout": None}) is None
