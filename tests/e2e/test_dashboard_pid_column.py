"""The jobs table's PID column shows a running or paused job's pid alone, as `gpuherd ls` does:
an ended job's pid named a process gone (or, by now, another program) and looked alive in the
column. The job's own page keeps it, in the attempt's record (over the socket)."""

from __future__ import annotations

import re

from test_dashboard_pages import call

from conftest import Herd


def _pid_cell(page: str, job_id: int) -> str:
    row = re.search(rf'<tr id="job-{job_id}".*?</tr>', page, re.S)
    assert row, page[:2000]
    cell = re.search(r'<td class="col-pid">(.*?)</td>', row.group(0), re.S)
    assert cell, row.group(0)
    return cell.group(1).strip()


def test_the_pid_column_shows_live_jobs_alone(daemon: Herd) -> None:
    ended = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "true").stdout)
    running = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "sleep", "60").stdout)
    daemon.wait_state(ended, "succeeded")
    daemon.wait_state(running, "running")
    paused = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "sleep", "60").stdout)
    daemon.wait_state(paused, "running")
    daemon.cli("pause", str(paused))
    daemon.wait_state(paused, "paused")
    page = call(daemon, "GET", "/ui/jobs").body
    assert daemon.job(ended)["pid"]  # recorded: the JSON API and the job's page keep it
    assert _pid_cell(page, ended) == ""
    assert _pid_cell(page, running) == str(daemon.job(running)["pid"])
    assert _pid_cell(page, paused) == str(daemon.job(paused)["pid"])
    job_page = call(daemon, "GET", f"/jobs/{ended}").body
    assert f"<dd>{daemon.job(ended)['pid']}</dd>" in job_page
    daemon.cli("kill", f"{running},{paused}")
