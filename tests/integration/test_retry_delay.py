"""`--retry-delay D`: a failed attempt's automatic retry waits D, queued, before it may start
(a flaky network or a GPU another user grabbed gets time to come back), counted from the
attempt's end; the wait survives a daemon restart, and `hold` + `release` ends it early.
While it waits, the job has no GPUs (its attempts keep theirs)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from conftest import Herd, wait_for


def attempts(herd: Herd, job_id: int) -> list[dict[str, float]]:
    return list(herd.job(job_id)["attempts"])


def test_each_retry_waits_its_delay_and_says_so(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "2", "--retry-delay", "1s", "--", "exit 3")

    def waiting_or_past() -> dict[str, Any] | None:
        job = daemon.job(job_id)
        waits = job["attempt"] == 1 and job["state"] == "queued" and job["retry_at"] is not None
        return job if waits or job["attempt"] >= 2 else None

    seen = wait_for(waiting_or_past, what="the first retry to wait (or to have started)")
    done = daemon.wait_state(job_id, "failed", timeout=30)
    assert done["attempt"] == 3
    runs = attempts(daemon, job_id)
    retries = [e for e in done["events"] if e["event"] == "retry"]
    assert len(retries) == 2, retries
    # How long the daemon took to hear each end, by its records (the event's time is taken a
    # little after the `now` the wording was chosen by): heard within JUST_ENDED (1 s), the
    # delay as typed; later, on a loaded machine, the delay has passed and it runs at once.
    heard = [retry["at"] - run["ended_at"] for retry, run in zip(retries, runs, strict=False)]
    for (before, after), retry, late in zip(pairwise(runs), retries, heard, strict=True):
        # The GPUs were free: only the delay held the retry back.
        assert after["started_at"] - before["ended_at"] >= 1.0
        typed = "exit 3; runs again in 1s (--retry-delay)"
        passed = "exit 3; its --retry-delay 1s has passed since it ended"
        assert retry["detail"] in ((typed,) if late < 1.0 else (typed, passed)), (late, retry)
    if seen["attempt"] == 1:  # the wait, seen while it lasted (a loaded machine may miss it)
        assert seen["reason"].startswith("retrying at ")
        assert seen["reason"].endswith(" (--retry-delay 1s)")  # as typed (was 1.0s)
        assert seen["retry_delay"] == 1.0


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


def test_a_job_waiting_for_its_retry_has_no_gpus(shared_daemon: Herd) -> None:
    """A queued job has no GPUs: `ls --json` gave its last attempt's, `show` printed them and
    the dashboard listed them as if it ran there (before). Its attempt keeps them."""
    daemon = shared_daemon
    job_id = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    wait_for(
        lambda: (job := daemon.job(job_id))["attempt"] == 1 and job["state"] == "queued",
        what="the retry to wait",
    )
    (listed,) = [job for job in daemon.json("ls") if job["id"] == job_id]
    assert listed["gpus"] == []  # before: [0], the failed attempt's
    shown = daemon.json("show", str(job_id))
    assert shown["gpus"] == [] and len(shown["attempts"][0]["gpus"]) == 1
    assert re.search(r"^gpus +-$", daemon.cli("show", str(job_id)).stdout, re.MULTILINE)
    row = daemon.page("/jobs").split(f'<tr id="job-{job_id}"', 1)[1].split("</tr>", 1)[0]
    assert (
        '<td class="gpus"><span class="muted">(1)</span></td>' in row
    )  # asked for 1, as `ls` says
    # Its ask alone (it read `- (asked for 1 GPU)`): the attempt's GPUs are in its table.
    page = daemon.page(f"/jobs/{job_id}")
    assert '<dt>GPUs</dt><dd><span class="muted" id="job-requested">(asked for 1 GPU)' in page


def test_waiting_jobs_an_older_daemon_left_with_gpus_have_none(daemon: Herd) -> None:
    """A daemon from before a waiting job lost its GPUs left a retried job (queued, or held by
    `retry --hold`) with its last attempt's in herd.db, until its next move: `ls --json`,
    `show` and the dashboard gave them (before). They read as none, as a job queued since."""
    queued = daemon.submit("--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    held = daemon.submit("--", "exit 4")
    wait_for(lambda: daemon.job(queued)["attempt"] == 1 and daemon.job(queued)["state"] == "queued")
    daemon.wait_state(held, "failed")
    daemon.cli("retry", "--hold", str(held))
    daemon.cli("daemon", "stop")
    with sqlite3.connect(daemon.home / "herd.db") as db:  # as the older daemon left them
        db.execute(
            "UPDATE jobs SET assigned = (SELECT gpus FROM attempts WHERE job_id = jobs.id)"
            " WHERE id IN (?, ?)",
            (queued, held),
        )
        stored = db.execute("SELECT assigned FROM jobs WHERE id IN (?, ?)", (queued, held))
        assert [len(json.loads(gpus)) for (gpus,) in stored] == [1, 1]
    db.close()
    daemon.start()

    listed = {job["id"]: job for job in daemon.json("ls")}
    assert (listed[queued]["gpus"], listed[held]["gpus"]) == ([], [])  # before: [0], [0]
    for job_id, state in ((queued, "queued"), (held, "held")):
        shown = daemon.json("show", str(job_id))
        assert (shown["state"], shown["gpus"], len(shown["attempts"][0]["gpus"])) == (state, [], 1)
        assert re.search(r"^gpus +-$", daemon.cli("show", str(job_id)).stdout, re.MULTILINE)
        row = daemon.page("/jobs").split(f'<tr id="job-{job_id}"', 1)[1].split("</tr>", 1)[0]
        assert '<td class="gpus"><span class="muted">(1)</span></td>' in row


def process_file(herd: Herd, job_id: int) -> Path:
    return herd.home / "jobs" / str(job_id) / "attempt-1" / "process"


def failed_first(herd: Herd, job_id: int) -> bool:
    """Its attempt 1's shell has recorded its exit status (`exit 3`)."""
    return process_file(herd, job_id).read_text().split()[-2:] == ["exit", "3"]


def test_a_delay_counts_from_the_attempts_end_also_one_no_daemon_saw(
    herd: Herd, tmp_path: Path
) -> None:
    """Two jobs with `--retry-delay 10m` failed while no daemon ran: one an hour ago, its
    retry due, runs at once; one 2 minutes ago waits the 8 minutes left. (Before, both waited
    10 minutes from the restart.) When each ended is its process file's time."""
    herd.start("--fake-gpus", "2")
    go = tmp_path / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    fails_first = f'if [ "$GPUHERD_ATTEMPT" = 1 ]; then {wait}; exit 3; fi'
    late, recent = (
        herd.submit("--retries", "1", "--retry-delay", "10m", "--", fails_first) for _ in "ab"
    )
    for job_id in (late, recent):
        herd.wait_state(job_id, "running")
        wait_for(process_file(herd, job_id).exists, what="its process file")
    herd.cli("daemon", "stop")
    go.touch()
    wait_for(lambda: failed_first(herd, late) and failed_first(herd, recent), what="failures")
    now = time.time()
    os.utime(process_file(herd, late), (now - 3600, now - 3600))
    os.utime(process_file(herd, recent), (now - 120, now - 120))
    herd.start("--fake-gpus", "2")

    assert herd.wait_state(late, "succeeded")["attempt"] == 2  # before: waited 10 minutes
    (retry,) = [e for e in herd.json("show", str(late))["events"] if e["event"] == "retry"]
    assert retry["detail"] == "exit 3; its --retry-delay 10m has passed since it ended"
    waiting = herd.job(recent)
    assert (waiting["state"], waiting["attempt"]) == ("queued", 1)
    assert abs(waiting["retry_at"] - (now - 120 + 600)) < 2  # before: the restart's + 600
