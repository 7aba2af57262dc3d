"""`--retry-delay D`: a failed attempt's automatic retry waits D, queued, before it may start
(a flaky network or a GPU another user grabbed gets time to come back); the wait survives a
daemon restart, and `hold` + `release` ends it early."""

from __future__ import annotations

from itertools import pairwise

from conftest import Herd, wait_for


def attempts(herd: Herd, job_id: int) -> list[dict[str, float]]:
    return list(herd.job(job_id)["attempts"])


def test_each_retry_waits_its_delay_and_says_so(daemon: Herd) -> None:
    job_id = daemon.submit("--retries", "2", "--retry-delay", "1s", "--", "exit 3")
    waiting = wait_for(
        lambda: (job := daemon.job(job_id))["attempt"] == 1 and job["state"] == "queued" and job,
        what="the first retry to wait",
    )
    assert waiting["reason"].startswith("retrying at ")
    assert waiting["reason"].endswith(" (--retry-delay 1s)")  # as typed (was 1.0s)
    assert waiting["retry_at"] is not None and waiting["retry_delay"] == 1.0
    done = daemon.wait_state(job_id, "failed", timeout=30)
    assert done["attempt"] == 3
    runs = attempts(daemon, job_id)
    for before, after in pairwise(runs):
        # The GPUs were free: only the delay held the retry back.
        assert after["started_at"] - before["ended_at"] >= 1.0
    retries = [e for e in done["events"] if e["event"] == "retry"]
    assert [e["detail"] for e in retries] == ["exit 3; runs again in 1s (--retry-delay)"] * 2


def test_the_wait_survives_a_restart_and_hold_release_ends_it(daemon: Herd) -> None:
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    wait_for(lambda: daemon.job(job_id)["state"] == "queued" and daemon.job(job_id)["attempt"])
    daemon.cli("daemon", "stop")
    daemon.start()
    job = daemon.job(job_id)
    assert (job["state"], job["attempt"]) == ("queued", 1)  # still waiting its hour
    assert job["reason"].endswith("(--retry-delay 1h)")
    daemon.cli("hold", str(job_id))
    assert daemon.job(job_id)["reason"] == "held"  # not a --begin time: held until released
    daemon.cli("release", str(job_id))
    assert daemon.wait_state(job_id, "failed")["attempt"] == 2  # ran at once


def test_a_short_delay_passes_while_the_daemon_is_down(daemon: Herd) -> None:
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1s", "--", "exit 3")
    wait_for(lambda: daemon.job(job_id)["state"] == "queued" and daemon.job(job_id)["attempt"])
    daemon.cli("daemon", "stop")
    daemon.start()  # the time came meanwhile (or comes soon): the retry runs
    done = daemon.wait_state(job_id, "failed", timeout=30)
    runs = attempts(daemon, job_id)
    assert done["attempt"] == 2 and runs[1]["started_at"] - runs[0]["ended_at"] >= 1.0
