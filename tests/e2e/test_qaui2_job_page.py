"""A job's page: why a waiting job waits said once, and a big log's size beside its download
link; the jobs page's *Retry all failed* keeping to its filter (over the Unix socket)."""

from __future__ import annotations

import re

from test_dashboard_pages import call, post

from conftest import Herd, wait_for


def test_a_waiting_jobs_page_says_waiting_once(daemon: Herd) -> None:
    """It said "Waiting: waiting for job 1 (...)"."""
    held = daemon.submit("--hold", "--gpus", "0", "--", "true")
    waiter = daemon.submit("--after", str(held), "--gpus", "0", "--", "true")
    page = call(daemon, "GET", f"/jobs/{waiter}").body
    line = f'class="reason-line">Waiting for job {held} (held: gpuherd release {held})</p>'
    assert line in page
    daemon.cli("pause")
    assert 'class="reason-line">Waiting: held</p>' in call(daemon, "GET", f"/jobs/{held}").body
    assert "Waiting: waiting" not in call(daemon, "GET", f"/jobs/{waiter}").body


def test_a_log_longer_than_its_tail_gives_its_size_by_the_download_link(daemon: Herd) -> None:
    """The page shows a log's last 64 KiB: the link downloads all of it, 300 MB maybe."""
    big = daemon.submit("--gpus", "0", "--", "head -c 3000000 /dev/zero | tr '\\0' 'x'")
    daemon.wait_state(big, "succeeded")
    page = call(daemon, "GET", f"/jobs/{big}").body
    assert '<span class="muted small" id="log-stdout-size"' in page
    assert ">(2.9 MiB)</span>" in page
    assert 'id="log-stderr-size"' not in page  # an empty log: nothing to warn of


def test_retry_all_failed_on_a_filtered_page_retries_that_filters_jobs(daemon: Herd) -> None:
    """On a project's (or a sweep's) page it retried every failed job, the others' too."""
    mine = [daemon.submit("--project", "mine", "--gpus", "0", "--", "exit 3") for _ in range(2)]
    other = daemon.submit("--project", "other", "--gpus", "0", "--", "exit 3")
    for job_id in [*mine, other]:
        daemon.wait_state(job_id, "failed")
    page = call(daemon, "GET", "/jobs?project=mine&state=failed").body
    assert '<input type="hidden" name="scope" value="project=mine">' in page
    assert ">Retry all failed (this filter)</button>" in page
    answer = post(daemon, "/ui/jobs/retry-failed", scope="project=mine")
    assert "2 failed jobs queued again" in answer.body
    for job_id in mine:
        wait_for(lambda j=job_id: daemon.job(j)["attempt"] == 2, what=f"job {job_id} retried")
    assert daemon.job(other)["attempt"] == 1
    answer = post(daemon, "/ui/jobs/retry-failed", scope="project=none-such")
    assert "no failed job of this filter to retry" in answer.body
    assert re.search(
        r'data-confirm="Retry (all \d+ failed jobs|the 1 failed job)\?">Retry all failed<',
        call(daemon, "GET", "/jobs?state=failed").body,
    )  # with no filter but the state: every failed job, as before (mine may have failed again)
