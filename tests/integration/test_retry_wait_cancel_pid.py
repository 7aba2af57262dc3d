"""A job cancelled while it waits out its --retry-delay has no pid, as it has no start, host or
run time: `show`, `show --json` and `ls --csv` gave it its failed attempt's pid back, a
process that ended long ago (whose number the system may since have given to another). Its
attempt keeps that pid. Checked for each way such a job is cancelled: a `kill` of it alone,
a `kill` that cancels a job waiting for it too, and the failure of a job it waits for."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

from conftest import Herd, wait_for


def _waiting_to_retry(herd: Herd) -> int:
    """A job whose attempt 1 failed, waiting out a --retry-delay of 5 minutes (in a project
    of its own, which `ls` lists alone)."""
    options = ("--project", f"p{uuid4().hex[:8]}", "--retries", "1", "--retry-delay", "5m")
    job = herd.submit(*options, "--", "exit 2")
    wait_for(lambda: herd.job(job)["retry_at"], what=f"job {job} waiting to retry")
    return job


def _no_pid_of_its_own(herd: Herd, job: int, how: str) -> None:
    shown: dict[str, Any] = herd.json("show", str(job))
    (first,) = shown["attempts"]
    assert first["pid"] is not None  # the failed attempt keeps its own
    assert (shown["state"], shown["outcome"]) == ("cancelled", how)
    assert (shown["pid"], shown["started_at"], shown["gpus"]) == (None, None, [])
    text = herd.cli("show", str(job)).stdout.splitlines()
    assert "pid          -" in text
    assert any(line.strip().startswith("1: exit 2 on GPU") for line in text)
    mine = ("--project", shown["project"], "--all")
    listed = herd.cli("ls", *mine, "--csv", "--columns", "id,pid").stdout.splitlines()
    assert listed == ["id,pid", f"{job},"]
    (row,) = herd.json("ls", *mine)
    assert (row["id"], row["pid"]) == (job, None)


def test_a_retry_killed_alone_has_no_pid(shared_daemon: Herd) -> None:
    job = _waiting_to_retry(shared_daemon)
    shared_daemon.cli("kill", str(job))
    _no_pid_of_its_own(shared_daemon, job, "cancelled")


def test_a_retry_killed_with_its_waiter_has_no_pid(shared_daemon: Herd) -> None:
    job = _waiting_to_retry(shared_daemon)
    waiter = shared_daemon.submit("--after", str(job), "--", "true")
    said = shared_daemon.cli("kill", str(job)).stdout
    assert said == f"job {job}: cancelled, and job {waiter}, which waited for it\n"
    _no_pid_of_its_own(shared_daemon, job, "cancelled")


def test_a_retry_cancelled_by_a_failed_dependency_has_no_pid(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    runs = herd.running_until(tmp_path / "go")
    job = _waiting_to_retry(herd)
    herd.cli("edit", str(job), "--after", str(runs))
    herd.cli("kill", str(runs))  # killed: `--after` is never met
    herd.wait_state(job, "cancelled")
    _no_pid_of_its_own(herd, job, "dependency_failed")


def test_a_retry_killed_after_a_restart_has_no_pid(daemon: Herd) -> None:
    """Through a restart the job still waits to retry (no pid while it does), and its kill
    then leaves it none either."""
    job = _waiting_to_retry(daemon)
    daemon.cli("daemon", "restart")
    assert (daemon.job(job)["state"], daemon.job(job)["pid"]) == ("queued", None)
    daemon.cli("kill", str(job))
    _no_pid_of_its_own(daemon, job, "cancelled")
