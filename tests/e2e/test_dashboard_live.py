"""The dashboard staying live and saying what goes wrong: a finished job's page following its
retries, a draining daemon, refused actions, and a daemon restarted (the page reconnecting).

Most tests talk HTTP over the daemon's Unix socket (no browser); the ones whose behaviour is
in dashboard.js drive Debian's chromium, as test_dashboard.py does.
"""

from __future__ import annotations

import html
import http.client
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from test_dashboard import TIMEOUT_MS, browser, expect, open_board
from test_dashboard_pages import call, post
from test_dashboard_rough_edges import form_error

from conftest import Herd, UnixConnection, wait_for

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

FAILS = 'for i in 1 2 3; do echo "att $GPUHERD_ATTEMPT line $i"; sleep 0.1; done; exit 1'
LARGEST = 2**63 - 1


class Stream:
    """A server-sent event stream over the socket, read one event at a time."""

    def __init__(self, herd: Herd, path: str) -> None:
        self.conn = UnixConnection(herd.client.socket_path, timeout=15)
        self.conn.request("GET", path)
        self.response: http.client.HTTPResponse = self.conn.getresponse()
        assert self.response.status == 200

    def events(self) -> Iterator[tuple[str, str]]:
        """(event, data) as they come; ends with the stream."""
        name, data = "message", []
        while line := self.response.readline().decode():
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and data:
                yield name, "\n".join(data)
                name, data = "message", []

    def until(self, wanted: str) -> list[tuple[str, str]]:
        seen = []
        for name, data in self.events():
            seen.append((name, data))
            if name == wanted:
                return seen
        raise AssertionError(f"the stream ended before '{wanted}': {seen}")

    def close(self) -> None:
        self.conn.close()


# ---- a finished job's page follows its retries ----------------------------------------------


def test_a_finished_jobs_live_stream_follows_a_retry(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--gpus", "0", "--", "sh", "-c", FAILS)
    daemon.wait_state(job_id, "failed")
    assert "live=1" in call(daemon, "GET", f"/jobs/{job_id}").body  # the page asks for it
    stream = Stream(daemon, f"/ui/jobs/{job_id}/stream?attempt=1&live=1")
    try:
        assert stream.until("state")
        daemon.cli("retry", str(job_id))  # after the stream read everything: it must not end
        seen = stream.until("attempt")
        assert ("attempt", "2") in seen and ("end", "1") not in seen
        assert [d for n, d in seen if n == "stdout"] == [
            "att 1 line 1\natt 1 line 2\natt 1 line 3\n"
        ]
    finally:
        stream.close()
    follow = Stream(daemon, f"/ui/jobs/{job_id}/stream?live=1")  # the page, reloaded
    try:
        text = ""
        for name, data in follow.events():
            text += data if name == "stdout" else ""
            if "att 2 line 3" in text:
                break
        assert text == "att 2 line 1\natt 2 line 2\natt 2 line 3\n"
    finally:
        follow.close()
    head = call(daemon, "GET", f"/ui/jobs/{job_id}?attempt=2").body
    assert 'class="current"' in head and "<td>2</td>" in head


def test_a_retry_begun_before_the_pages_stream_connects_is_followed(shared_daemon: Herd) -> None:
    """A new attempt that began between a job page's render and its stream's connection:
    the stream compared attempts with the one it found on connecting, not the page's, and
    the page stayed on the old attempt's log. A page showing an older attempt on purpose
    (`?attempt=1`) stays on it."""
    daemon = shared_daemon
    job_id = daemon.submit("--gpus", "0", "--", "sh", "-c", FAILS)
    daemon.wait_state(job_id, "failed")
    daemon.cli("retry", str(job_id))
    wait_for(lambda: daemon.job(job_id)["attempt"] == 2, what="attempt 2 to begin")
    daemon.wait_state(job_id, "failed")
    pages = {
        path: call(daemon, "GET", path).body
        for path in (f"/jobs/{job_id}", f"/jobs/{job_id}?attempt=1")
    }
    daemon.cli("retry", str(job_id))  # after the pages were drawn, before they connect
    wait_for(lambda: daemon.job(job_id)["attempt"] == 3, what="attempt 3 to begin")
    streams = {
        path: Stream(daemon, html.unescape(re.findall(r'sse-connect="([^"]*)"', body)[0]))
        for path, body in pages.items()
    }
    try:
        assert streams[f"/jobs/{job_id}"].until("attempt")[-1] == ("attempt", "3")
        pinned = streams[f"/jobs/{job_id}?attempt=1"].until("state")  # the retry, told
        assert "attempt" not in [name for name, _ in pinned], pinned
    finally:
        for stream in streams.values():
            stream.close()


def test_a_finished_jobs_live_stream_ends_when_the_job_is_removed(shared_daemon: Herd) -> None:
    # `rm` of a finished job published nothing: its page's stream waited for ever.
    daemon = shared_daemon
    job_id = daemon.submit("--gpus", "0", "--", "true")
    daemon.wait_state(job_id, "succeeded")
    stream = Stream(daemon, f"/ui/jobs/{job_id}/stream?live=1")
    try:
        stream.until("state")
        daemon.cli("rm", str(job_id))
        assert stream.until("end")[-1] == ("end", "gone")
    finally:
        stream.close()


def test_without_live_a_finished_jobs_stream_still_ends(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--gpus", "0", "--", "echo", "done")
    daemon.wait_state(job_id, "succeeded")
    answer = call(daemon, "GET", f"/ui/jobs/{job_id}/stream?attempt=1")  # read to its end
    assert "event: end" in answer.body and "done" in answer.body


# ---- a draining daemon ------------------------------------------------------------------------


def test_the_dashboard_says_the_daemon_drains(daemon: Herd, tmp_path: Path) -> None:
    runner = daemon.submit("--gpus", "0", "--", "sleep", "60")
    daemon.wait_state(runner, "running")
    assert "Queue running" in call(daemon, "GET", "/ui/overview").body
    assert "draining-warning" not in call(daemon, "GET", "/submit").body
    stop = call(
        daemon,
        "POST",
        "/api/v1/daemon/stop",
        json.dumps({"mode": "drain"}),
        {"Content-Type": "application/json"},
    )
    assert stop.status == 200, stop.body

    overview = call(daemon, "GET", "/ui/overview").body
    assert "Daemon draining" in overview
    assert (
        "draining: the daemon stops once 1 running job ends; queued jobs start after the next "
        "<code>gpuherd daemon start</code>"
    ) in overview
    assert "queue-toggle" not in overview and "Queue running" not in overview
    assert "Daemon draining" in call(daemon, "GET", "/").body

    form = call(daemon, "GET", "/submit").body
    assert 'id="draining-warning"' in form and "after the next" in form
    sent = post(daemon, "/submit", htmx=False, commands="true", gpus="0", cwd=str(tmp_path))
    assert sent.status == 303
    jobs = call(daemon, "GET", sent.headers["location"]).body
    assert 'id="draining-warning"' in jobs and "this job starts after the next" in jobs
    assert 'id="draining-warning"' not in call(daemon, "GET", "/jobs").body

    refused = post(daemon, "/ui/queue/resume")  # a page drawn before the drain
    assert refused.status == 409
    assert "drains" in json.loads(refused.body)["error"]


# ---- errors re-shown, not dropped -------------------------------------------------------------


def test_a_huge_priority_in_the_form_shows_the_form_again(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    said = {
        str(LARGEST + 1): f"'priority': {LARGEST + 1} is too large (at most 2**63 - 1)",
        str(-LARGEST - 2): f"'priority': {-LARGEST - 2} is too small (at least -2**63)",
        "9" * 40: f"'priority': {'9' * 40} is too large (at most 2**63 - 1)",
    }  # as the CLI says it (`gpuherd priority`), by the box's label as the form's other refusals
    for priority, refusal in said.items():
        answer = post(
            daemon,
            "/submit",
            htmx=False,
            commands="echo big",
            priority=priority,
            gpus="0",
            cwd=str(tmp_path),
        )
        assert answer.status == 400, answer.body
        assert "<form" in answer.body and 'id="submit-error"' in answer.body
        assert form_error(answer.body) == refusal and "echo big" in answer.body
    fine = post(
        daemon,
        "/submit",
        htmx=False,
        commands="true",
        priority=str(LARGEST),
        gpus="0",
        cwd=str(tmp_path),
    )
    assert fine.status == 303


def test_ping_answers_nothing(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    answer = call(daemon, "GET", "/ui/ping")
    assert answer.status == 204 and answer.body == ""


# ---- in the browser ---------------------------------------------------------------------------


def test_a_finished_jobs_page_follows_its_retries(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit("--gpus", "0", "--", "sh", "-c", FAILS)
        board.herd.wait_state(job_id, "failed")
        page = board.page(f"/jobs/{job_id}")
        log = page.locator("#log-stdout")
        expect(log).to_contain_text("att 1 line 3")
        page.click("#job-head .act-retry")  # (a) the page's own button
        expect(log).to_contain_text("att 2 line 3")
        expect(page.locator("#job-state")).to_have_text("failed")
        assert "att 1" not in log.inner_text()
        board.herd.cli("retry", str(job_id))  # (b) from a shell
        expect(log).to_contain_text("att 3 line 3")
        expect(page.locator("#job-state")).to_have_text("failed")
        expect(page.locator("table.attempts tbody tr")).to_have_count(3)
        page.close()


def _past_64_bits(route: Any) -> None:
    """The action sent for a job id past 64 bits: answered 422, the API's JSON line. (It was
    prio + on a job at the highest priority, now said in the page's message as refusals of
    a job are: test_dashboard_pages.py.)"""
    route.continue_(post_data=f"action=prio-up&ids={'9' * 20}")


def test_a_refused_action_shows_its_error(browser: Any, expect: Any, tmp_path: Path) -> None:
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit("--hold", "--", "true")
        page = board.page(f"/jobs/{job_id}", [], accept=True)  # (the remove asks first)
        page.route("**/ui/jobs/act", _past_64_bits)
        page.click("#job-head .act-prio-up")  # answered 422
        error = page.locator("#flash .flash.error")
        expect(error).to_contain_text("too large")
        assert "{" not in error.inner_text()  # the error's line, not the JSON
        page.unroute("**/ui/jobs/act")
        board.herd.cli("kill", str(job_id))
        page.click("#job-head .act-rm")  # a success: the jobs list says so (it was removed)
        expect(page.locator("#removed")).to_have_text(f"job {job_id}: removed")
        page.close()


def test_an_action_during_a_refresh_of_the_head_is_sent_and_answered(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    # The job page refreshes its head (buttons included) when its stream connects and when the
    # job changes. A click while that refresh was on its way was queued behind it (the form
    # took the head's hx-sync) and then dropped with the replaced button; and an answer that
    # came back after the refresh went to a button no longer on the page, so its error was
    # never shown (CI: the test above, once). Both requests are held here to order them.
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit("--hold", "--", "true")
        page = board.page(f"/jobs/{job_id}")
        heads: list[Any] = []
        actions: list[Any] = []
        page.route(re.compile(r"/ui/jobs/\d+\?attempt="), lambda route: heads.append(route))
        page.route("**/ui/jobs/act", lambda route: actions.append(route))

        def sent(held: list[Any], what: str) -> None:  # page.evaluate runs route handlers
            wait_for(lambda: held or page.evaluate("0"), what=what)

        page.evaluate("() => { window.before = document.querySelector('#job-head form'); }")
        page.evaluate("() => htmx.trigger(document.body, 'refresh')")
        sent(heads, "the head's refresh")
        page.click("#job-head .act-prio-up")
        sent(actions, "the action, while the refresh is on its way")
        heads[0].continue_()
        page.wait_for_function("() => document.querySelector('#job-head form') !== window.before")
        _past_64_bits(actions[0])  # answered 422 now, to a button that was replaced
        expect(page.locator("#flash .flash.error")).to_contain_text("too large")
        page.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_restarted_daemon_keeps_the_page_live_and_calm(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    """A daemon restarted keeps its token, so the open page reconnects by itself: it says
    calmly that it reconnects while the daemon is away, logs no error of its own (the
    browser's own line for each refused connection aside, spaced out), and its stream follows
    the job again. Before, the daemon had a new token: the page was dead until reopened from
    `gpuherd ui`, and its scripts logged errors all along. A new token on purpose (`gpuherd ui
    --new-token`) says so."""
    herd = Herd(tmp_path / "home")
    port = _free_port()
    context = None
    try:
        herd.start("--fake-gpus", "1", "--listen", f"127.0.0.1:{port}")
        job_id = int(herd.cli("submit", "-q", "--hold", "--gpus", "0", "--", "true").stdout)
        url = herd.cli("ui", "--url").stdout.strip()
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(url.replace("/?", f"/jobs/{job_id}?"))
        banner = page.locator("#conn-banner")
        expect(page.locator("#job-state")).to_have_text("held")
        expect(banner).to_be_hidden()
        herd.cli("daemon", "stop")
        expect(banner).to_have_text("Reconnecting to the daemon…")
        expect(banner).to_have_class(re.compile(r"\bcalm\b"))
        herd.start("--fake-gpus", "1", "--listen", f"127.0.0.1:{port}")
        expect(banner).to_be_hidden(timeout=3 * TIMEOUT_MS)
        herd.cli("daemon", "restart")
        expect(banner).to_be_hidden(timeout=3 * TIMEOUT_MS)
        herd.cli("release", str(job_id))  # said by the stream alone: it is open again
        expect(page.locator("#job-state")).to_have_text("succeeded", timeout=3 * TIMEOUT_MS)
        own = [text for text in errors if not text.startswith("Failed to load resource: net::")]
        assert own == [], errors
        herd.cli("ui", "--new-token")
        page.evaluate("() => htmx.trigger(document.body, 'refresh')")  # (a 403, as any next ask)
        expect(banner).to_contain_text("token has changed", timeout=3 * TIMEOUT_MS)
        expect(banner.locator("code")).to_have_text("gpuherd ui")
        page.goto(herd.cli("ui", "--url").stdout.strip())  # the new URL: all is well again
        expect(page.locator("#conn-banner")).to_be_hidden()
        expect(page.locator("#queue-state")).to_have_text("Queue running")
    finally:
        if context is not None:
            context.close()
        herd.cleanup()
