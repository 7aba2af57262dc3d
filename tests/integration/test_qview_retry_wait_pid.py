"""A job waiting to retry (`--retries 2 --retry-delay 60s`, its first attempt failed) has no
process: `show`, `show --json`, `ls --json` and the dashboard's job page gave the failed
attempt's pid as the job's, as if it ran. They give none now; the attempt keeps its pid,
labelled as that attempt's (`show`'s attempts, `--json`'s `attempts`, the spawn event)."""

from __future__ import annotations

import re

from conftest import Herd, wait_for


def test_a_job_waiting_to_retry_shows_no_pid_but_its_attempt_does(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--retries", "2", "--retry-delay", "60s", "sh -c 'exit 1'")

    def retrying() -> dict[str, object] | None:
        view = herd.job(job)
        return view if view["state"] == "queued" and view["attempts"] else None

    view = wait_for(retrying, what=f"job {job} to wait for its retry")
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

    # The dashboard's page: no PID for the job, the attempt's in its row of the attempts.
    page = herd.page(f"/jobs/{job}")
    assert "<dt>PID</dt><dd>-</dd>" in page
    assert f"<td>{failed_pid}</td>" in page
