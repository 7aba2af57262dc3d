"""`--begin`: a job is held until its time, then the daemon queues it; by hand it can be
released early or held for good, and a time that passed while no daemon ran is honoured at
the next start."""

from __future__ import annotations

import time

from conftest import Herd, wait_for


def test_a_job_is_held_until_its_begin_time_then_runs(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--begin", "+1s", "--", "true")
    held = daemon.job(job_id)
    assert held["state"] == "held"
    assert held["reason"].startswith("held until ") and held["reason"].endswith("(--begin)")
    assert held["begin"] > held["created_at"]
    assert "begins" in daemon.cli("show", str(job_id)).stdout

    done = daemon.wait_state(job_id, "succeeded", timeout=15)
    assert done["started_at"] >= held["begin"]
    assert done["begin"] is None
    release = [e for e in done["events"] if e["event"] == "release"]
    assert [(e["from_state"], e["to_state"], e["detail"]) for e in release] == [
        ("held", "queued", "its --begin time came")
    ]


def test_hold_drops_a_begin_time_and_release_starts_the_job_now(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    kept = daemon.submit("--begin", "+1s", "--", "true")
    answer = daemon.cli("hold", str(kept)).stdout.strip()
    assert answer == f"job {kept}: held until released (--begin time dropped)"
    # A witness with the same time, submitted later: once it has run, the held job's time
    # has passed too.
    witness = daemon.submit("--begin", "+1s", "--", "true")
    daemon.wait_state(witness, "succeeded")
    still = daemon.job(kept)
    assert (still["state"], still["reason"], still["begin"]) == ("held", "held", None)

    early = daemon.submit("--begin", "+2h", "--", "true")
    assert daemon.job(early)["state"] == "held"
    daemon.cli("release", str(early))
    assert daemon.wait_state(early, "succeeded")["begin"] is None

    cancelled = daemon.submit("--begin", "+2h", "--", "true")
    daemon.cli("kill", str(cancelled))
    assert (daemon.job(cancelled)["state"], daemon.job(cancelled)["begin"]) == ("cancelled", None)
    daemon.cli("retry", str(cancelled))  # runs now: the time went with the hold
    daemon.wait_state(cancelled, "succeeded")


def test_a_begin_time_passed_while_no_daemon_ran_is_honoured_at_start(daemon: Herd) -> None:
    job_id = daemon.submit("--begin", "+1s", "--", "true")
    begin = daemon.job(job_id)["begin"]
    daemon.cli("daemon", "stop")
    wait_for(lambda: time.time() > begin + 0.2, what="the job's --begin time to pass")
    daemon.start()
    daemon.wait_state(job_id, "succeeded")


def test_a_sweep_begins_all_its_points_at_once(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    out = daemon.json("sweep", "echo {a}", "-p", "a", "1", "2", "--begin", "+1s")
    ids = out["ids"]
    assert [daemon.job(i)["state"] for i in ids] == ["held", "held"]
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")


def test_a_begin_time_in_the_past_queues_the_job_at_once(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--begin", "2001-01-01T00:00", "--", "true")
    assert daemon.wait_state(job_id, "succeeded")["begin"] is None
