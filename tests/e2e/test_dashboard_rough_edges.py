"""Rough edges of the dashboard: a page past the end, text that reorders itself, very long
names, a drain that must show at once, actions that ask first, and what a state says.

HTTP tests talk over the daemon's Unix socket; the ones whose behaviour is in dashboard.js or
the live refresh drive Debian's chromium, as test_dashboard.py does.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from test_dashboard import browser, expect, open_board
from test_dashboard_pages import call, post

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

FOLLOW_OVERVIEW = """() => {
  window.step = "";
  window.overviewSwaps = [];
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (event.detail.target.id !== "overview") { return; }
    const cause = event.detail.requestConfig.triggeringEvent;
    event.detail.xhr.asked = [window.step, cause ? cause.type : "poll"];
  });
  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target.id !== "overview") { return; }
    const [step, cause] = event.detail.xhr.asked;
    const state = document.querySelector("#queue-state").textContent.trim();
    window.overviewSwaps.push({ step, cause, state });
  });
}"""
"""Records, for each refresh of the overview, the step of the test it was asked in, what asked
for it (the page's event stream: `sse:change`; its 5 s poll: `poll`) and the state it showed."""

SHOWN_BY_AN_EVENT = """([step, state]) => window.overviewSwaps.some(
  (swap) => swap.step === step && swap.cause === "sse:change" && swap.state === state)"""


def test_a_page_past_the_end_points_to_the_last_one(daemon: Herd) -> None:
    for _ in range(2):
        daemon.submit("--hold", "--", "true")
    beyond = call(daemon, "GET", "/ui/jobs?page=102").body
    assert "No jobs yet" not in beyond and "No job matches" not in beyond
    assert "2 jobs, none on page 102" in beyond
    assert re.search(r'<a href="/jobs\?">the last is page 1</a>', beyond)
    empty = call(daemon, "GET", "/ui/jobs?state=failed&page=3").body  # nothing to page through
    assert "No job matches this filter." in empty and "none on page" not in empty


def test_a_submitted_id_no_job_can_have_shows_no_banner(shared_daemon: Herd) -> None:
    """`/jobs?submitted=N` (where the submit form lands) showed "Submitted job #N" for any
    number, one past 64 bits too, linking a job that cannot exist; such a value is now
    ignored, as `submitted=x` or `page=x` are (the page, without the banner)."""
    job_id = shared_daemon.submit("--hold", "--", "true")
    banner = re.compile(r'<div class="flash ok">Submitted job\s*<a href="/jobs/(\d+)">')
    assert banner.findall(call(shared_daemon, "GET", f"/jobs?submitted={job_id}").body) == [
        str(job_id)
    ]
    for value in ("99999999999999999999", str(2**63), "0", "-3", f"{job_id},{2**63}"):
        page = call(shared_daemon, "GET", f"/jobs?submitted={value}")
        assert page.status == 200 and 'id="jobs-live"' in page.body, value
        assert not banner.search(page.body) and "Submitted" not in page.body, value


def test_a_banner_names_only_jobs_that_exist(shared_daemon: Herd) -> None:
    """`/jobs?submitted=9999`, a possible id no job has (a URL kept after `rm`, or typed),
    still said "Submitted job #9999", linking a page that says there is no such job."""
    kept = shared_daemon.submit("--hold", "--", "true")
    removed = shared_daemon.submit("--hold", "--", "true")
    shared_daemon.cli("rm", str(removed))
    banner = re.compile(r'<div class="flash ok">(Submitted jobs?)\s*(.*?)</div>', re.S)
    page = call(shared_daemon, "GET", f"/jobs?submitted={kept},{removed}").body
    [(said, links)] = banner.findall(page)
    assert (said, re.findall(r'href="/jobs/(\d+)"', links)) == ("Submitted job", [str(kept)])
    for value in (str(removed), "9999999", f"{removed},9999999"):
        page = call(shared_daemon, "GET", f"/jobs?submitted={value}").body
        assert 'id="jobs-live"' in page and "Submitted" not in page, value


def test_bidi_controls_in_user_text_show_as_code_points(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    job_id = daemon.submit(
        "--hold", "--name", "rtl\u202eevil", "--project", "p\u2066q", "--", "echo \u200fhi"
    )
    pages = {path: call(daemon, "GET", path).body for path in ("/jobs", "/", f"/jobs/{job_id}")}
    # The edit form holds the text as it is stored (saving it must not change it).
    shown, form = re.subn(
        r'<details class="edit-job">.*?</details>', "", pages[f"/jobs/{job_id}"], flags=re.S
    )
    assert form == 1 and 'name="was.name" value="rtl\u202eevil"' in pages[f"/jobs/{job_id}"]
    pages[f"/jobs/{job_id}"] = shown
    for path, body in pages.items():
        assert "rtl&lt;U+202E&gt;evil" in body, path
        assert "echo &lt;U+200F&gt;hi" in body, path
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]", body), path
    assert "p&lt;U+2066&gt;q" in shown
    assert daemon.job(job_id)["name"] == "rtl\u202eevil"


def test_bidi_controls_in_a_sweeps_command_show_as_code_points(shared_daemon: Herd) -> None:
    # (A sweep's name cannot hold them: it is refused as a folder name would be.)
    daemon = shared_daemon
    daemon.cli("sweep", "echo \u202e{x}", "-p", "x", "1", "--name", "bidi", "--hold")
    for path in ("/sweeps/bidi", "/ui/sweeps/bidi"):
        body = call(daemon, "GET", path).body
        assert "echo &lt;U+202E&gt;{x}" in body, path
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]", body), path


def test_a_very_long_name_is_cut_in_the_heading_and_shown_whole_below(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    name = "n" * 3000
    job_id = daemon.submit("--hold", "--name", name, "--", "true")
    page = call(daemon, "GET", f"/jobs/{job_id}").body
    heading = re.search(r"<h1>.*?</h1>", page, re.S)
    assert heading is not None
    assert f'<span class="name" title="{name}">{"n" * 79}…</span>' in heading.group(0)
    assert f'<dt>Name</dt><dd class="long-name">{name}</dd>' in page
    short = daemon.submit("--hold", "--name", "short", "--", "true")
    assert "<dt>Name</dt>" not in call(daemon, "GET", f"/jobs/{short}").body


def test_a_state_is_said_once_and_a_paused_attempt_is_paused(daemon: Herd) -> None:
    killed = daemon.submit("--gpus", "0", "--", "sleep", "60")
    daemon.wait_state(killed, "running")
    daemon.cli("kill", str(killed))
    daemon.wait_state(killed, "killed")
    assert "Exit status" not in call(daemon, "GET", f"/ui/jobs/{killed}").body
    failed = daemon.submit("--gpus", "0", "--", "false")
    daemon.wait_state(failed, "failed")
    assert "<dt>Exit status</dt><dd>exit 1</dd>" in call(daemon, "GET", f"/ui/jobs/{failed}").body

    paused = daemon.submit("--gpus", "0", "--", "sleep", "60")
    daemon.wait_state(paused, "running")
    daemon.cli("pause", str(paused))
    daemon.wait_state(paused, "paused")
    rows = call(daemon, "GET", f"/ui/jobs/{paused}").body.split('<table class="attempts">')[1]
    assert '<td title="">paused</td>' in rows and "running" not in rows
    daemon.cli("kill", str(paused))


def test_destructive_actions_carry_their_question(daemon: Herd) -> None:
    running = daemon.submit("--gpus", "0", "--", "sleep", "60")
    held = daemon.submit("--hold", "--", "true")
    daemon.wait_state(running, "running")
    page = call(daemon, "GET", "/ui/jobs").body
    row = page.split(f'id="job-{running}"')[1].split("</tr>")[0]
    assert f'data-confirm="Job {running} is running: kill it? Its work so far is lost."' in row
    assert f"Job {running} is running: kill it and start it again?" in row
    assert 'value="pause">pause' in row  # pausing loses nothing: asked nothing
    waiting = page.split(f'id="job-{held}"')[1].split("</tr>")[0]
    assert waiting.count("data-confirm") == 1  # cancel, release, prio: no; remove: yes
    assert f'data-confirm="Remove job {held} and its logs?"' in waiting
    whole = call(daemon, "GET", "/jobs").body
    assert 'id="retry-failed">Retry all failed<' in whole  # no failed job: nothing to ask
    daemon.cli("kill", str(running))


def test_a_kill_asked_first_is_sent_only_when_confirmed(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit("--gpus", "0", "--", "sleep", "60")
        board.herd.wait_state(job_id, "running")
        declined: list[str] = []
        page = board.page(f"/jobs/{job_id}", declined)
        page.click("#job-head .act-kill")
        assert declined == [f"Job {job_id} is running: kill it? Its work so far is lost."]
        page.click("#job-head .act-pause")  # asks nothing: sent at once, after the "no"
        expect(page.locator("#job-state")).to_have_text("paused")
        assert board.herd.job(job_id)["state"] == "paused"  # the kill was never sent
        page.close()
        confirmed: list[str] = []
        page = board.page(f"/jobs/{job_id}", confirmed, accept=True)
        page.click("#job-head .act-kill")
        expect(page.locator("#job-state")).to_have_text("killed")
        assert confirmed == [f"Job {job_id} is paused: kill it? Its work so far is lost."]
        page.close()


def test_the_overview_shows_a_drain_at_once(browser: Any, expect: Any, tmp_path: Path) -> None:
    go = tmp_path / "go"
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit(
            "--gpus", "0", "--", "sh", "-c", f"until [ -e {go} ]; do sleep 0.05; done"
        )
        board.herd.wait_state(job_id, "running")
        page = board.page("/")
        state = page.locator("#queue-state")
        expect(state).to_have_text("Queue running")
        page.evaluate(FOLLOW_OVERVIEW)
        # The page's event stream is live: each change shows in a refresh its stream asked
        # for, as it came (not only with the overview's 5 s poll, whenever that comes).
        steps = [
            ("pause", lambda: board.herd.cli("pause"), "Queue paused"),
            ("resume", lambda: board.herd.cli("resume"), "Queue running"),
            (
                "drain",
                lambda: board.herd.client.post("/daemon/stop", {"mode": "drain"}),
                "Daemon draining",
            ),
        ]
        for step, act, shown in steps:
            page.evaluate("(step) => { window.step = step; }", step)
            act()
            page.wait_for_function(SHOWN_BY_AN_EVENT, arg=[step, shown])
            expect(state).to_have_text(shown)
        expect(page.locator("#queue-toggle")).to_have_count(0)
        page.close()
        go.touch()


def test_a_name_or_command_cut_with_an_ellipsis_is_whole_in_its_tooltip(daemon: Herd) -> None:
    """The jobs table, the overview's recent jobs and the GPU cards cut long names and
    commands with "…" (CSS): their whole text is in the cell's title, as the Why-waiting
    reason's is; a command of megabytes is cut there too (TITLE_MAX)."""
    name = "resnet152-imagenet-" + "x" * 120
    command = "sleep 30; echo " + " ".join(f"--opt{i} {i}" for i in range(60))
    daemon.submit("--name", name, "--", command)
    daemon.submit("--name", "huge", "--", "true " + "y" * 5000)
    jobs = call(daemon, "GET", "/ui/jobs").body
    assert f'<td class="name" title="{name}"><span class="shown">{name}</span></td>' in jobs
    assert f'<td class="cmd" title="{command}"><code>{command}</code></td>' in jobs
    huge = re.search(r'<td class="cmd" title="(true y+…)"><code>true y{5000}</code>', jobs)
    assert huge is not None and len(huge.group(1)) == 1000
    daemon.wait_state(1, "running")
    overview = call(daemon, "GET", "/ui/overview").body  # the GPU card of the running job
    assert f'<span class="name" title="{name}">{name}</span>' in overview


def test_an_attempt_the_job_does_not_have_is_said_so(shared_daemon: Herd) -> None:
    """`/jobs/3?attempt=99` showed the latest attempt as if it were the one asked for; it
    still shows the latest (as a page past the last points to the last), and says so."""
    job_id = shared_daemon.submit("--gpus", "0", "--retries", "1", "--", "false")
    shared_daemon.wait_state(job_id, "failed")
    shown = re.compile(r'<tr class="current">\s*<td>(\d+)</td>')
    note = re.compile(r'<p class="warn" id="no-such-attempt">(.*?)</p>')
    for asked in ("99", "0"):
        page = call(shared_daemon, "GET", f"/jobs/{job_id}?attempt={asked}")
        assert page.status == 200 and shown.findall(page.body) == ["2"]
        said = f"job {job_id} has no attempt {asked}: it has attempts 1-2, showing attempt 2"
        assert note.findall(page.body) == [said]
    for query in ("?attempt=1", "?attempt=2", ""):  # one it has
        page = call(shared_daemon, "GET", f"/jobs/{job_id}{query}")
        assert page.status == 200 and not note.search(page.body), query
    # No number: the latest too, said so (it was shown silently, as if asked for).
    page = call(shared_daemon, "GET", f"/jobs/{job_id}?attempt=x")
    said = f"job {job_id} has no attempt &#39;x&#39;: it has attempts 1-2, showing attempt 2"
    assert shown.findall(page.body) == ["2"] and note.findall(page.body) == [said]
    waiting = shared_daemon.submit("--hold", "--", "true")
    page = call(shared_daemon, "GET", f"/jobs/{waiting}?attempt=1").body
    assert note.findall(page) == [f"job {waiting} has no attempt 1: it has not started yet"]


def form_error(body: str) -> str:
    """The one error line a form's answer shows (the submit page, or an edit's flash)."""
    # (an edit's names the box it is about: data-field, for connection.js)
    found = r'(?:id="submit-error"|class="flash error"(?: data-field="\w+")?)>(.*?)</div>'
    [said] = re.findall(found, body)
    return html.unescape(said)


def test_the_forms_name_the_wrong_field_by_its_label(shared_daemon: Herd, tmp_path: Path) -> None:
    """The submit and edit forms answered in the CLI's words (`gpus (--gpus) must be between
    0 and 64`), or named no field (`GPUs and priority must be whole numbers`): each names
    the wrong field by the label of its box, and no option a form does not have."""
    typed = {"commands": "true", "cwd": str(tmp_path), "hold": "1"}
    wrong = {
        (("gpus", "99"),): "'GPUs' must be between 0 and 64, got 99",
        (("gpus", "two"),): "'GPUs': 'two' is not a whole number",
        (("priority", "high"),): "'priority': 'high' is not a whole number",
        (("mem", "lots"),): "'memory per GPU': invalid size 'lots'",
        (("gpus", "0"), ("only_gpus", "1")): "'only on GPUs' with 'GPUs' 0: a CPU-only job",
        # Past 64 bits, and the reasons that name the GPUs it may use: they said `priority
        # 99… is too large` and `of --only-gpus 7`, the API's field and the CLI's option.
        (("priority", "9" * 20),): f"'priority': {'9' * 20} is too large (at most 2**63 - 1)",
        (("only_gpus", "7"),): (
            "this job can never run: asks for 1 GPU of 'only on GPUs' 7, but gpuherd has no "
            "GPU 7: name GPUs gpuherd has in 'only on GPUs': 0-3"
        ),
        (("gpus", "2"), ("only_gpus", "1")): (
            "this job can never run: asks for 2 GPUs but 'only on GPUs' names 1: give fewer "
            "'GPUs', at most 1, or name more in 'only on GPUs'"
        ),
        (("only_gpus", "0"), ("mem", "1000GiB")): (
            "this job can never run: asks for 1000.0 GiB per GPU but the largest GPU of 'only "
            "on GPUs' 0 has 24.0 GiB"
        ),
    }
    for fields, said in wrong.items():
        answer = post(shared_daemon, "/submit", htmx=False, **{**typed, **dict(fields)})
        assert answer.status in (400, 422) and form_error(answer.body).startswith(said), fields
        assert "--" not in form_error(answer.body)

    job_id = shared_daemon.submit("--hold", "--gpus", "0", "--", "true")
    wrong = {
        (("gpus", "99"),): "'GPUs' must be between 0 and 64, got 99",
        (("retries", "-1"),): "'retries' must be 0 or more, got -1",
        (("mem", "10"),): "'memory per GPU': 10 is 10 bytes: give a unit",
        (("ram", "lots"),): "'host memory': invalid size 'lots'",
        (("only_gpus", "a"),): "'only on GPUs': invalid GPU index 'a'",
        (("retry_delay", "soon"),): "'retry delay': invalid duration 'soon'",
        (("after_any", "x"),): "'after any end of': invalid job id 'x'",
        (("gpus", "1"), ("only_gpus", "7")): (
            f"job {job_id} would never run: asks for 1 GPU of 'only on GPUs' 7, but"
        ),
        (("cwd", "/no/such/folder"),): (
            "working directory /no/such/folder does not exist: give the absolute path of an "
            "existing folder as 'working directory'"
        ),
    }
    for fields, said in wrong.items():
        edit = {**dict(fields), **{f"was.{name}": "" for name, _ in fields}}
        answer = post(shared_daemon, f"/ui/jobs/{job_id}/edit", **edit)
        assert form_error(answer.body).startswith(said), fields
    assert shared_daemon.job(job_id)["gpus_requested"] == 0  # nothing changed
