"""A job waiting to retry (`--retries 2 --retry-delay 60s`, its first attempt failed) has no
process and no run of its own: `show`, `show --json`, `ls --json` and the dashboard's job page
gave the failed attempt's pid, host, start, end and outcome as the job's, as if it ran or had
ended. They give none now (`-` / null); `show` says the attempt to come and when its delay
ends; the failed attempt keeps its pid and times, labelled as that attempt's (`show`'s
attempts, `--json`'s `attempts`, the spawn event). A `retry --hold` of a failed job reads
alike."""

from __future__ import annotations

import re

from conftest import Herd, wait_for

RUN = ("outcome", "exit_code", "signal", "message", "started_at", "ended_at", "pid")


def waiting_to_retry(herd: Herd) -> tuple[int, dict[str, object]]:
    """A job whose first attempt failed, waiting a minute for its retry, and its view."""
    job = herd.submit("--retries", "2", "--retry-delay", "60s", "sh -c 'exit 1'")

    def retrying() -> dict[str, object] | None:
        view = herd.job(job)
        return view if view["state"] == "queued" and view["attempts"] else None

    return job, wait_for(retrying, what=f"job {job} to wait for its retry")


def test_a_job_waiting_to_retry_shows_no_pid_but_its_attempt_does(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job, view = waiting_to_retry(herd)
    (attempt,) = view["attempts"]
    failed_pid = attempt["pid"]
    assert isinstance(failed_pid, int) and attempt["outcome"] == "exit"
    assert view["pid"] is None  # (before: the failed attempt's)
    assert f"pid {failed_pid}" in [e["detail"] for e in view["events"]]  # its spawn event
    assert herd.json("show", str(job))["pid"] is None
    (listed,) = [j for j in herd.json("ls", "--state", "queued") if j["id"] == job]
    assert listed["pid"] is None

    shown = herd.cli("show", str(job)).stdout
    assert re.search(r"^pid +-$", shown, re.M), shown
    assert f"  1: exit 1 on GPU {attempt['gpus'][0]}, pid {failed_pid}, started" in shown

    # The dashboard's page: no PID for the job (its next attempt has not started: no row of
    # dashes), the attempt's in its row of the attempts.
    page = herd.page(f"/jobs/{job}")
    assert "<dt>PID</dt>" not in page
    assert "attempt 2 not started yet" in page
    assert f"<td>{failed_pid}</td>" in page


def test_a_job_waiting_to_retry_shows_no_run_of_its_own(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job, view = waiting_to_retry(herd)
    assert {key: view[key] for key in RUN} == dict.fromkeys(RUN)
    assert view["attempt"] == 1 and view["retry_at"] is not None
    (listed,) = [j for j in herd.json("ls", "--state", "queued") if j["id"] == job]
    assert {key: listed[key] for key in RUN} == dict.fromkeys(RUN)
    (attempt,) = view["attempts"]  # the failed attempt keeps how it ran
    assert attempt["outcome"] == "exit" and attempt["started_at"] and attempt["ended_at"]

    shown = herd.cli("show", str(job)).stdout
    for row in ("host", "started", "ended"):
        assert re.search(rf"^{row} +-$", shown, re.M), shown
    assert re.search(
        r"^attempt +2 next, in (1m00s|\d+\.\ds) \(retries allowed: 2, 1 left\)$", shown, re.M
    )
    assert re.search(
        r"^  1: exit 1 on GPU \d, pid \d+, started \S+ \S+, ended \d\d:\d\d:\d\d$", shown, re.M
    ), shown


def test_a_failed_job_retried_held_says_its_next_attempt(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("exit 3")
    herd.wait_state(job, "failed")
    herd.cli("retry", "--hold", str(job))
    shown = herd.cli("show", str(job)).stdout
    assert re.search(r"^attempt +2 next \(retries allowed: 0\)$", shown, re.M), shown
    assert re.search(r"^started +-$", shown, re.M) and re.search(r"^host +-$", shown, re.M)
    assert herd.json("show", str(job))["started_at"] is None
