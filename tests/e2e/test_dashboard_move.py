"""Moving a waiting job from the dashboard, as `gpuherd move --first / --before ID`: a job's
page ("Move to the front", "Move before job N") and the jobs table's "to front".

The answers over the daemon's Unix socket (no browser), then the buttons and the form in
Debian's chromium, as test_dashboard.py.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board
from test_dashboard_pages import call, post
from test_dashboard_refresh import refresh_head

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


def queue(herd: Herd) -> list[int]:
    """The waiting jobs in the order they are to start (as `ls` lists them)."""
    return [job["id"] for job in herd.client.get("/jobs")["jobs"]]


def waiting(herd: Herd, count: int) -> list[int]:
    """`count` jobs that wait in a paused queue."""
    herd.cli("pause")
    return herd.submit_lines(["true"] * count)


def flash(body: str) -> list[tuple[str, str]]:
    """An action's answer as (ok or error, line) pairs, as the page shows them."""
    found = re.findall(r'<div class="flash (ok|error)">([^<]*)</div>', body)
    return [(kind, html.unescape(text)) for kind, text in found]


def move(herd: Herd, job_id: int, action: str, before: str = "") -> list[tuple[str, str]]:
    """The dashboard's move of `job_id` (action front or before) and its answer's lines."""
    fields = {"ids": str(job_id), "action": action, "next": f"/jobs/{job_id}"}
    answer = post(herd, "/ui/jobs/act", **fields, **({"before": before} if before else {}))
    assert answer.status == 200, answer.body
    done = any(kind == "ok" for kind, _ in flash(answer.body))
    # Something done refreshes the page's live parts; a refusal leaves the form as typed.
    assert (answer.headers.get("hx-trigger-after-swap") == "refresh") is done
    return flash(answer.body)


# ---- the answers (no browser) ---------------------------------------------------------------


def test_a_move_answers_in_the_clis_words_and_changes_the_queue(daemon: Herd) -> None:
    a, b, c = waiting(daemon, 3)
    assert move(daemon, c, "front") == [("ok", f"job {c}: moved to the front")]
    assert queue(daemon) == [c, a, b]
    assert move(daemon, b, "before", f"{c}") == [("ok", f"job {b}: moved before job {c}")]
    assert queue(daemon) == [b, c, a]
    # "#12", as the pages write a job, is taken too; a held job moves as a queued one does.
    daemon.cli("hold", str(a))
    assert move(daemon, a, "before", f" #{b} ") == [("ok", f"job {a}: moved before job {b}")]
    # Ahead of a job of higher priority: the moved job takes its priority, and says so.
    urgent = daemon.submit("--priority", "5", "--", "true")
    assert move(daemon, c, "front") == [("ok", f"job {c}: moved to the front (priority 0 -> 5)")]
    assert queue(daemon)[:2] == [c, urgent]
    # A form posted without JavaScript goes back to the job's page.
    plain = post(daemon, "/ui/jobs/act", htmx=False, ids=str(b), action="front", next=f"/jobs/{b}")
    assert plain.status == 303 and plain.headers["location"] == f"/jobs/{b}"
    assert queue(daemon)[0] == b


def test_a_refused_move_says_why_in_one_line(daemon: Herd) -> None:
    running = daemon.submit("--gpus", "1", "--", "sleep", "60")
    daemon.wait_state(running, "running")
    (job,) = waiting(daemon, 1)
    finished = daemon.submit("--hold", "--", "true")
    daemon.cli("kill", str(finished))
    before = queue(daemon)
    refusals = {
        (running, "front", ""): f"job {running} is running: only queued or held jobs can move",
        (job, "before", str(running)): f"job {running} is running: move before a queued job",
        (
            job,
            "before",
            str(finished),
        ): f"job {finished} has ended (cancelled): move before a queued job",
        (job, "before", "99999"): "no job 99999",
        (99999, "front", ""): "no job 99999",
        (job, "before", str(job)): f"job {job} cannot move before itself: name another queued job",
        (job, "before", "abc"): "'abc' is not a job number: type the number of a queued job",
        (job, "before", "-3"): "'-3' is not a job number: type the number of a queued job",
        (job, "before", ""): "move before which job? type its number",
    }
    for (job_id, action, to), said in refusals.items():
        assert move(daemon, job_id, action, to) == [("error", said)], (job_id, action, to)
    # Past SQLite's integers (no 500): refused as every such number of a request is.
    fields = {"ids": str(job), "action": "before", "before": "9" * 30}
    huge = post(daemon, "/ui/jobs/act", **fields)
    assert (huge.status, json.loads(huge.body)) == (
        422,
        {"error": f"before {'9' * 30} is too large (at most 2**63 - 1)"},
    )
    assert queue(daemon) == before


def test_the_move_controls_are_on_waiting_jobs_only(daemon: Herd) -> None:
    running = daemon.submit("--gpus", "1", "--", "sleep", "60")
    daemon.wait_state(running, "running")
    queued, held = waiting(daemon, 2)
    daemon.cli("hold", str(held))
    rows = call(daemon, "GET", "/ui/jobs").body

    def row(job_id: int) -> str:
        start = rows.index(f'<tr id="job-{job_id}"')
        return rows[start : rows.index("</tr>", start)]

    for job_id in (queued, held):
        # Next to priority +/-, and asked without a question (moving loses nothing).
        assert re.search(
            r'act-prio-down" name="action" value="prio-down">[^<]*</button>\s*'
            r'<button class="btn small act-front" name="action" value="front">to front</button>',
            row(job_id),
        ), row(job_id)
    assert "act-front" not in row(running)
    page = call(daemon, "GET", f"/jobs/{queued}").body
    start = page.index('<div class="move-job')
    line = page[start : page.index("</div>", start)]
    assert ">Move to the front</button>" in line and 'class="move-before"' in line
    assert "Move before job" in line and "data-confirm" not in line
    assert "move-job" not in call(daemon, "GET", f"/jobs/{running}").body


# ---- in the browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    """A daemon with one fake GPU and its queue paused: every job submitted here waits."""
    with open_board(browser, tmp_path_factory.mktemp("move") / "home", "1") as b:
        b.herd.cli("pause")
        yield b


def test_to_front_in_the_jobs_table(board: Board, expect: Any) -> None:
    ids = board.herd.submit_lines(["true"] * 3)
    dialogs: list[str] = []
    page = board.page("/jobs", dialogs)
    page.locator(f"#job-{ids[2]} .act-front").click()
    expect(page.locator("#flash .flash.ok")).to_have_text(f"job {ids[2]}: moved to the front")
    assert queue(board.herd)[0] == ids[2]
    assert dialogs == []  # no confirmation: a move loses nothing
    page.close()


def test_a_waiting_jobs_buttons_fit_the_jobs_table(board: Board, expect: Any) -> None:
    """With "to front", a waiting job's row has six buttons, kept on one line: in a window
    1280 px wide the table ran past its box, and "remove" was cut, to be scrolled to (as the
    docs' screenshot of the jobs page showed). They wrap instead."""
    name, command = "lr-sweep-" * 8, "python train.py " + "--lr 0.01 " * 20
    held = board.submit("--hold", "--name", name, "--", command)
    queued = board.submit("--name", name, "--", command)
    page = board.page("/jobs")  # 1280 px wide
    for job_id in (held, queued):
        expect(page.locator(f"#job-{job_id} .act-rm")).to_be_in_viewport(ratio=1)
    box = "document.querySelector('.table-scroll')"
    widths = page.evaluate(f"() => [{box}.scrollWidth, {box}.clientWidth]")
    assert widths[0] <= widths[1], widths  # nothing to scroll to
    page.close()


def test_move_before_and_to_the_front_on_a_jobs_page(board: Board, expect: Any) -> None:
    a, b = board.herd.submit_lines(["true"] * 2)
    page = board.page(f"/jobs/{b}")
    box = page.locator("form.move-before input[name=before]")
    box.fill(str(a))
    refresh_head(page)  # the job changed meanwhile (a busy queue): the number stays typed
    expect(box).to_have_value(str(a))
    expect(box).to_be_focused()
    box.press("Enter")  # moves before the job typed, never to the front
    ok = page.locator("#flash .flash.ok")
    expect(ok).to_have_text(f"job {b}: moved before job {a}")
    order = queue(board.herd)
    assert order.index(b) == order.index(a) - 1

    box.fill("99999")
    page.locator("form.move-before button").click()
    expect(page.locator("#flash .flash.error")).to_have_text("no job 99999")

    page.get_by_role("button", name="Move to the front").click()
    expect(ok).to_have_text(f"job {b}: moved to the front")
    assert queue(board.herd)[0] == b
    board.herd.cli("kill", str(b))  # a job that no longer waits has nothing to move
    expect(page.locator("#job-state")).to_have_text("cancelled")
    expect(page.locator(".move-job")).to_have_count(0)
    page.close()


def test_the_move_line_fits_a_phone(board: Board, expect: Any) -> None:
    (job_id,) = board.herd.submit_lines(["true"])
    page = board.page(f"/jobs/{job_id}")
    page.set_viewport_size({"width": 390, "height": 800})
    expect(page.locator("form.move-before input[name=before]")).to_be_visible()
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, wide
    page.close()
