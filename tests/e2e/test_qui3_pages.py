"""Dashboard pages over the Unix socket (no browser): a jobs row's likeliest action first, a
waiting reason's bidi controls shown, the sweeps page saying when a sweep was submitted, a
failed job's last stderr lines at the top of its page, the sweep filter's full names."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Herd


def _row(page: str, job_id: int) -> str:
    start = page.index(f'<tr id="job-{job_id}"')
    return page[start : page.index("</tr>", start)]


def _buttons(row: str) -> list[str]:
    return re.findall(r'name="action" value="([\w-]+)"', row)


def test_a_rows_first_action_is_the_one_most_likely_wanted(daemon: Herd) -> None:
    """A narrow window shows a row's first action beside its ⋯ menu: a held job's was
    "cancel", a paused job's "kill"."""
    held = daemon.submit("--hold", "--gpus", "0", "--", "true")
    paused = daemon.submit("--gpus", "1", "--", "sleep 60")
    running = daemon.submit("--gpus", "1", "--", "sleep 60")
    failed = daemon.submit("--gpus", "1", "--", "exit 3")
    daemon.wait_state(paused, "running")
    daemon.cli("pause", str(paused))
    daemon.wait_state(paused, "paused")
    daemon.wait_state(running, "running")
    daemon.wait_state(failed, "failed")
    page = daemon.page("/jobs")
    firsts = {job: _buttons(_row(page, job))[0] for job in (held, paused, running, failed)}
    assert firsts == {held: "release", paused: "resume", running: "kill", failed: "retry"}
    # the others in their order, in the menu; none lost
    assert _buttons(_row(page, held)) == ["release", "kill", "prio-up", "prio-down", "front", "rm"]
    assert _buttons(_row(page, paused)) == ["resume", "kill", "retry", "prio-up", "prio-down"]
    # a job's own page keeps its order
    head = daemon.page(f"/jobs/{held}")
    assert _buttons(head[head.index('<header class="job-title"') :])[:2] == [
        "kill",
        "release",
    ]


def test_a_waiting_reason_shows_its_bidi_controls(daemon: Herd) -> None:
    """A project's name in a reason (`a run slot of project NAME`) read reordered: names
    showed U+202E, reasons did not."""
    project = "rtl\u202eevil"
    daemon.cli("config", "set", "project-limits", f"{project}=1")
    first = daemon.submit("--project", project, "--gpus", "0", "--", "sleep 60")
    daemon.wait_state(first, "running")
    second = daemon.submit("--project", project, "--gpus", "0", "--", "true")
    shown = "rtl&lt;U+202E&gt;evil"
    row = _row(daemon.page("/jobs"), second)
    assert f'title="waiting for a run slot of project {shown} (1 running' in row
    assert f">waiting for a run slot of project {shown} (1 running" in row
    assert "\u202e" not in row
    head = daemon.page(f"/jobs/{second}")
    line = head[head.index('class="reason-line"') :]
    assert line.startswith(f'class="reason-line">Waiting for a run slot of project {shown} (1')
    assert "\u202e" not in line[: line.index("</p>")]  # (the edit form keeps the name as is)


def test_the_sweeps_page_says_when_a_sweep_was_submitted(daemon: Herd, tmp_path: Path) -> None:
    """It said "updated" and the time of its last submission: read as its last change."""
    args = ("sweep", "echo {lr}", "--gpus", "0", "--name", "lr-grid", "-p", "lr", "1", "2")
    daemon.cli(*args, "--results-dir", str(tmp_path / "res"))
    page = daemon.page("/sweeps")
    assert re.search(r"2 points · submitted \d{4}-\d\d-\d\d \d\d:\d\d:\d\d</span>", page), page
    assert "updated" not in page
    daemon.cli(*args, "3", "--results-dir", str(tmp_path / "res"))  # submitted again, grown
    again = r"3 points · submitted (\S+ \S+), again (\S+ \S+)</span>"
    assert re.search(again, daemon.page("/sweeps"))


def test_a_failed_jobs_page_shows_its_last_stderr_lines_at_the_top(
    daemon: Herd, tmp_path: Path
) -> None:
    """Below the facts, the stderr box was two screens down at 700 px."""
    script = "for i in $(seq 1 30); do echo line $i >&2; done; echo boom >&2; exit 2"
    failed = daemon.submit("--gpus", "0", "--", script)
    fine = daemon.submit("--gpus", "0", "--", "echo quiet >&2")
    killed = daemon.submit("--gpus", "1", "--", "echo started >&2; sleep 60")
    daemon.wait_state(failed, "failed")
    daemon.wait_state(fine, "succeeded")
    daemon.wait_state(killed, "running")
    daemon.cli("kill", str(killed))
    daemon.wait_state(killed, "killed")
    page = daemon.page(f"/jobs/{failed}")
    top = page[page.index('id="job-failure"') : page.index('<dl class="facts">')]
    tail = top[top.index('<pre class="log">') + len('<pre class="log">') : top.index("</pre>")]
    assert tail.splitlines() == ["line 26", "line 27", "line 28", "line 29", "line 30", "boom"]
    assert '<a href="#log-stderr">all of it below</a>' in top
    fragment = daemon.page(f"/ui/jobs/{failed}")  # the head drawn again, live
    assert 'id="job-failure"' in fragment and "boom" in fragment
    for quiet in (fine, killed):  # no failure to explain: a success, a kill asked for
        assert 'id="job-failure"' not in daemon.page(f"/jobs/{quiet}")
    merged = daemon.submit(
        "--gpus", "0", "--output", str(tmp_path / "%j.log"), "--", "echo oops >&2; exit 4"
    )
    daemon.wait_state(merged, "failed")  # its stderr went with its stdout: named so
    assert "The last lines of its output (" in daemon.page(f"/jobs/{merged}")


def test_the_sweep_filter_names_the_sweep_whole_in_its_tooltip(
    daemon: Herd, tmp_path: Path
) -> None:
    """At 1280 px the select is cut to 7rem (the filters on one line): `lr-seed-gri`."""
    name = "lr-seed-grid-of-a-long-name"
    daemon.cli("sweep", "echo {lr}", "--gpus", "0", "--name", name, "-p", "lr", "1",
               "--results-dir", str(tmp_path / "res"))  # fmt: skip
    page = daemon.page(f"/jobs?sweep={name}")
    assert f'id="sweep-filter" title="sweep {name}">' in page
    assert f'<option value="{name}" selected>{name}</option>' in page  # (the list shows it whole)
    assert 'id="sweep-filter" title="all sweeps">' in daemon.page("/jobs")
