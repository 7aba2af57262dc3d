"""A queued job waiting for a paused job says what lets it run, as it does for a held one:
a paused job never ends until resumed, and `waiting for job 19` alone read as if job 19 would
end by itself (`ls` said so however long the pause)."""

from __future__ import annotations

from conftest import Herd


def test_a_waiter_of_a_paused_job_says_resume_it(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    paused = daemon.submit("--", "sleep 600")
    daemon.wait_state(paused, "running")
    daemon.cli("pause", str(paused))
    waiter = daemon.submit("--after", str(paused), "--", "true")
    assert daemon.job(waiter)["reason"] == (
        f"waiting for job {paused} (paused: gpuherd resume {paused})"
    )
    held = daemon.submit("--hold", "--", "true")
    both = daemon.submit("--after-any", f"{paused},{held}", "--", "true")
    assert daemon.job(both)["reason"] == (
        f"waiting for jobs {paused},{held} (job {held} held: gpuherd release {held};"
        f" job {paused} paused: gpuherd resume {paused})"
    )
    daemon.cli("resume", str(paused))  # running again: it ends by itself
    assert daemon.job(waiter)["reason"] == f"waiting for job {paused}"
