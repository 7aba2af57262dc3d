"""A job waiting to retry (`--retries 2 --retry-delay 60s`, its first attempt failed) has no
run: `show` printed the failed attempt's host, start and end as the job's, and `--json` (and
`ls --json`) its start, end, outcome and exit code, as if it ran or had ended. They are
`-` / null now; `show` says the attempt to come and when its delay ends, and the failed
attempt's line keeps its times (its end too). A `retry --hold` of a failed job reads alike."""

from __future__ import annotations

import re

from conftest import Herd, wait_for

RUN = ("outcome", "exit_code", "signal", "message", "started_at", "ended_at", "pid")


def test_a_job_waiting_to_retry_shows_no_run_of_its_own(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--retries", "2", "--retry-delay", "60s", "sh -c 'exit 1'")

    def retrying() -> dict[str, object] | None:
        view = herd.job(job)
        return view if view["state"] == "queued" and view["attempts"] else None

    view = wait_for(retrying, what=f"job {job} to wait for its retry")
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
