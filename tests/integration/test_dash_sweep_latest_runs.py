"""A sweep page's state counts link to each point's latest job in that state (`latest=1`), as
`gpuherd sweep status` counts the points, and *Retry all failed* retries those alone. A sweep
whose 3 failing points were submitted twice linked `failed` to 6 jobs (both runs), and the
button asked about 6, retried 3 and refused 3, one line each (real daemon, over its socket)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlencode

from conftest import Herd, UnixConnection, wait_for

SWEEP = ("sweep", "exit {x}", "-p", "x", "1", "2", "3", "--gpus", "0", "-q")


def _post(herd: Herd, path: str, **fields: str) -> str:
    """A dashboard form posted as htmx posts it: the answer's fragment."""
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        headers = {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
        conn.request("POST", path, body=urlencode(fields), headers=headers)
        response = conn.getresponse()
        assert response.status == 200, response.status
        return response.read().decode()
    finally:
        conn.close()


def _rows(page: str) -> list[int]:
    """The job ids of a jobs page's rows."""
    return sorted(int(i) for i in re.findall(r'<tr id="job-(\d+)"', page))


def _question(page: str) -> str:
    found = re.search(r'id="retry-failed"(?: data-confirm="([^"]*)")?>', page)
    assert found, page
    return html.unescape(found[1] or "")


def _submitted_twice(herd: Herd, work: Path, name: str, *extra: str) -> tuple[list[str], ...]:
    first = herd.cli(*SWEEP, "--name", name, cwd=work).stdout.split()
    herd.cli("sweep", "wait", name, check=False)  # (every point fails: exit 1)
    again = herd.cli(*SWEEP, *extra, "--name", name, cwd=work).stdout.split()
    herd.cli("sweep", "wait", name, check=False)
    return first, again


def test_a_sweeps_failed_link_lists_each_points_latest_job_and_retries_those(
    daemon: Herd, tmp_path: Path
) -> None:
    first, again = _submitted_twice(daemon, tmp_path, "rb")
    assert len(first) == len(again) == 3
    sweep_page = daemon.page("/sweeps/rb")
    found = re.search(r'<a href="([^"]*)"><span class="swatch seg-failed"', sweep_page)
    assert found, sweep_page
    link = html.unescape(found[1])
    assert link == "/jobs?state=failed&state=killed&state=cancelled&state=lost&sweep=rb&latest=1"
    assert re.search(r'class="n">3</b> failed</a>', sweep_page)  # 3 points, 3 jobs behind
    listed = daemon.page(link)
    assert _rows(listed) == sorted(map(int, again))  # not 6 jobs: the older runs are not
    assert 'name="latest" value="1" checked>latest runs</label>' in listed  # (its filter)
    assert '<input type="hidden" name="scope" value="sweep=rb&amp;latest=1">' in listed
    assert _question(listed) == "Retry all 3 failed jobs of this filter, on every page?"
    # Every run of the sweep, both listed: the button still retries the 3 latest alone,
    # and says so before (it asked about 6 jobs, then refused 3).
    every = daemon.page("/jobs?state=failed&sweep=rb")
    assert _rows(every) == sorted(map(int, first + again))
    assert 'name="latest" value="1">latest runs</label>' in every
    assert _question(every) == (
        "Retry all 3 failed jobs of this filter, on every page? (3 older runs of points run"
        " again since left out: each point's latest job is retried)"
    )
    answer = _post(daemon, "/ui/jobs/retry-failed", scope="sweep=rb")
    assert "3 failed jobs queued again" in answer
    assert "3 older runs of points run again since left out" in answer
    assert "refused" not in answer and 'class="flash error' not in answer, answer
    for job_id in again:
        wait_for(lambda j=int(job_id): daemon.job(j)["attempt"] == 2, what=f"job {job_id}")
    assert all(daemon.job(int(j))["attempt"] == 1 for j in first)
    daemon.cli("sweep", "wait", "rb", check=False)
    answer = _post(daemon, "/ui/jobs/retry-failed", scope="sweep=rb&latest=1")
    assert "3 failed jobs queued again" in answer and "older" not in answer, answer


def test_the_latest_runs_are_those_of_the_sweeps_points_now(daemon: Herd, tmp_path: Path) -> None:
    """Submitted again with a narrower grid: x=3's run is of no point of the sweep now, and
    the page counts 2 failed points (`sweep status` too); the link lists their 2 jobs."""
    first = daemon.cli(*SWEEP, "--name", "narrow", cwd=tmp_path).stdout.split()
    daemon.cli("sweep", "wait", "narrow", check=False)
    again = daemon.cli(
        "sweep", "exit {x}", "-p", "x", "1", "2", "--gpus", "0", "-q", "--name", "narrow",
        cwd=tmp_path,
    ).stdout.split()  # fmt: skip
    daemon.cli("sweep", "wait", "narrow", check=False)
    assert re.search(r'class="n">2</b> failed</a>', daemon.page("/sweeps/narrow"))
    status = daemon.cli("sweep", "status", "narrow", "--state", "failed", "-q").stdout.split()
    assert status == again
    listed = daemon.page("/jobs?state=failed&sweep=narrow&latest=1")
    assert _rows(listed) == sorted(map(int, again))
    assert _question(listed) == "Retry all 2 failed jobs of this filter, on every page?"
    # Without the filter, x=3's run is its folder's latest: retried (`retry` takes it).
    every = daemon.page("/jobs?state=failed&sweep=narrow")
    assert _rows(every) == sorted(map(int, first + again))
    assert _question(every).startswith("Retry all 3 failed jobs of this filter, on every page?")
