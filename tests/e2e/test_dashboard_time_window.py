"""The jobs page's time window (`?since=`, as `gpuherd ls --since` picks jobs): the table, its
count and its pager keep to it, every link of the page keeps it, and a window no moment reads
is said and ignored. Over the daemon's Unix socket (a plain GET form: no browser needed)."""

from __future__ import annotations

import html
import re
import time
from datetime import datetime
from urllib.parse import urlencode

from test_dashboard_pages import call, post

from conftest import Herd, wait_for


def _rows(body: str) -> list[int]:
    return [int(job_id) for job_id in re.findall(r'<tr id="job-(\d+)"', body)]


def _page(herd: Herd, path: str) -> str:
    answer = call(herd, "GET", path)
    assert answer.status == 200, (path, answer.body[:500])
    return answer.body


def _link(body: str, words: str) -> str:
    """The href of the pager's link that says `words` (`older →`)."""
    found = re.search(r'href="(/jobs\?[^"]*)">' + re.escape(words), body)
    assert found is not None, words
    return html.unescape(found.group(1))


def test_the_jobs_page_lists_the_jobs_of_its_time_window(daemon: Herd) -> None:
    early = daemon.submit("--gpus", "0", "--", "true")
    held = daemon.submit("--hold", "--gpus", "0", "--", "true")  # before the cut, still waiting
    ended = daemon.wait_state(early, "succeeded")["ended_at"]
    cut = max(ended, daemon.job(held)["created_at"]) + 0.001
    wait_for(lambda: time.time() > cut + 0.01, what="the clock to pass the cut")
    late = daemon.submit_lines([f"echo {i}" for i in range(55)], "--hold", "--gpus", "0")
    moment = datetime.fromtimestamp(cut).isoformat()
    window = urlencode({"since": moment})

    # In the queue at some moment since the cut: the held job and the later ones, not the
    # job that ended before it; the count and the pager say so.
    first = _page(daemon, f"/jobs?{window}")
    assert _rows(first) == late[::-1][:50]
    assert "1–50 of 56, newest first" in first
    # Typed by hand, it shows as an option of its own, chosen; the live refresh, the ticked
    # rows' buttons and each row's buttons come back to the same window.
    assert f'<option value="{moment}" selected>since {moment}</option>' in first
    assert f'hx-get="/ui/jobs?{window}"' in first
    assert f'name="next" value="/jobs?{window}"' in first
    older = _link(first, "older →")
    assert older == f"/jobs?{window}&page=2"
    second = _page(daemon, older)
    assert _rows(second) == [*late[::-1][50:], held]
    assert "51–56 of 56" in second and early not in _rows(second)
    assert _link(second, "← newer") == f"/jobs?{window}"
    # With the other filters: the succeeded job is out of the window.
    assert "No job matches this filter." in _page(daemon, f"/ui/jobs?state=succeeded&{window}")
    assert _rows(_page(daemon, "/ui/jobs?state=succeeded")) == [early]

    # The select's choices: the last hour holds them all, its option chosen, and the links
    # keep `since=1h` (the last hour as of each look, not a moment frozen at the first).
    hour = _page(daemon, "/jobs?since=1h")
    assert "1–50 of 57" in hour
    assert '<option value="1h" selected>last hour</option>' in hour
    assert _link(hour, "older →") == "/jobs?since=1h&page=2"
    assert '<option value="" selected>any time</option>' in _page(daemon, "/jobs")
    assert "1–50 of 57" in _page(daemon, "/jobs")


def test_a_time_window_no_moment_reads_is_said_and_ignored(daemon: Herd) -> None:
    job = daemon.submit("--hold", "--gpus", "0", "--", "true")
    body = _page(daemon, "/jobs?since=last+tuesday")
    error = re.search(r'<div class="flash error" id="window-error">([^<]*)</div>', body)
    assert error is not None
    assert html.unescape(error.group(1)) == (
        "invalid time window 'last tuesday': use a time ago (2d, 12h, 30m), today, yesterday,"
        " a time of day (23:30) or a date (2026-11-20, 2026-11-20T14:00); showing jobs of"
        " any time"
    )
    assert _rows(body) == [job]
    # Ignored, it is not shown as a filter in force, nor sent as one by the page's buttons:
    # "Retry all failed (this filter)" retried every failed job, as the window was unread.
    assert '<option value="" selected>any time</option>' in body
    assert "last tuesday" not in body.replace(error.group(0), "")
    assert 'id="retry-failed">Retry all failed<' in body  # (no failed job: it asks nothing)
    failed = daemon.submit("--gpus", "0", "--", "exit 3")
    daemon.wait_state(failed, "failed")
    refused = post(daemon, "/ui/jobs/retry-failed", scope="since=last tuesday")
    assert "invalid time window &#39;last tuesday&#39;" in refused.body, refused.body
    assert "no job retried" in refused.body
    assert daemon.job(failed)["attempt"] == 1
