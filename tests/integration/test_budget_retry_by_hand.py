"""A retry by hand (`retry`, `retry --hold` then `release`, of a finished job or a running
one) gives the job its --retries anew, as a new submission would have them: the automatic
retries count from the attempt it starts, through a daemon restart or crash. Before, they
counted over the job's whole life, and a failed job retried by hand failed for good at once."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Herd, wait_for


def numbers(herd: Herd, job_id: int) -> list[int]:
    return [attempt["number"] for attempt in herd.json("show", str(job_id))["attempts"]]


def test_a_retried_job_gets_its_retries_again_across_a_restart(daemon: Herd) -> None:
    job_id = daemon.submit("--retries", "1", "--", "exit 1")
    assert daemon.wait_state(job_id, "failed")["attempt"] == 2
    daemon.cli("daemon", "stop")
    daemon.start("--fake-gpus", "4")
    daemon.cli("retry", str(job_id))
    shown = daemon.wait_state(job_id, "failed", timeout=30)
    assert (shown["attempt"], shown["exit_code"]) == (4, 1)  # before: 3, not retried
    assert numbers(daemon, job_id) == [1, 2, 3, 4]
    retries = [e["detail"] for e in shown["events"] if e["event"] == "retry"]
    assert retries == ["exit 1", "retry by the user", "exit 1"]


def test_retry_hold_edit_release_keeps_the_new_count_through_a_crash(daemon: Herd) -> None:
    job_id = daemon.submit("--retries", "2", "--", "exit 1")
    daemon.wait_state(job_id, "failed", timeout=30)
    daemon.cli("retry", "--hold", str(job_id))
    edited = daemon.cli("edit", str(job_id), "--retries", "1").stdout
    assert edited.strip() == f"job {job_id}: edited (retries 2 -> 1)"
    shown = daemon.cli("show", str(job_id)).stdout
    assert re.search(r"^attempt +4 next \(retries allowed: 1\)$", shown, re.MULTILINE), shown
    daemon.kill9()
    daemon.start("--fake-gpus", "4")
    daemon.cli("release", str(job_id))
    assert daemon.wait_state(job_id, "failed", timeout=30)["attempt"] == 5  # 4, and its retry
    assert numbers(daemon, job_id) == [1, 2, 3, 4, 5]


def test_a_retry_of_a_running_job_gives_it_its_retries_again(daemon: Herd, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    command = f"[ -e {ran} ] && exit 1; touch {ran}; sleep 600"  # fails once it ran
    job_id = daemon.submit("--retries", "1", "--", command)
    daemon.wait_state(job_id, "running")
    wait_for(ran.exists, what="the first attempt to start its sleep")
    daemon.cli("retry", str(job_id))  # attempt 2 fails, and is retried: attempt 3
    shown = daemon.wait_state(job_id, "failed", timeout=30)
    assert shown["attempt"] == 3  # before: 2, its one retry spent by the first attempt
    assert [a["outcome"] for a in shown["attempts"]] == ["killed", "exit", "exit"]


def test_show_says_the_retries_left_and_an_edit_under_them_says_the_retry_runs(
    daemon: Herd,
) -> None:
    job_id = daemon.submit("--retries", "2", "--retry-delay", "1h", "--", "exit 1")
    waiting = wait_for(
        lambda: (job := daemon.job(job_id))["attempt"] == 1 and job["state"] == "queued" and job,
        what="its first retry to wait",
    )
    assert waiting["retries_left"] == 1  # after the retry it waits for
    shown = daemon.cli("show", str(job_id)).stdout
    said = r"^attempt +2 next, in \S+ \(retries allowed: 2, 1 left\)$"  # (the retry's)
    assert re.search(said, shown, re.MULTILINE), shown
    edited = daemon.cli("edit", str(job_id), "--retries", "0").stdout.strip()
    assert edited == (
        f"job {job_id}: edited (retries 2 -> 0, the retry it waits for still runs: "
        f"gpuherd kill {job_id} cancels it)"
    )
