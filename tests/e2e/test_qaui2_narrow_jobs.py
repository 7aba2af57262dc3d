"""The jobs and GPUs tables on a narrow window, and the jobs page saying the queue is paused.

Below 1200 px a row keeps its first action and a ⋯ menu of the others (its six buttons took two
lines, ten jobs a screen at 700 px, or ran out of the window); PID goes, and below 900 px the
command too (an unnamed job's command shows under Name). From 1200 px the row is as before.
One daemon (2 fake GPUs, TCP listener) and one browser serve the module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

ROW_MAX_PX = 52
"""A row of one line of buttons (its reason why it waits may take two lines of small text):
two lines of buttons made it about 65 px."""


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qaui2") / "home", "2") as b:
        yield b


@pytest.fixture(scope="module")
def jobs(board: Board) -> dict[str, int]:
    """A running, a held (unnamed), a queued and a failed job, on the page of project `narrow`."""
    herd, project = board.herd, ("--project", "narrow")
    failed = herd.submit(*project, "--gpus", "0", "--name", "broken", "--", "false")
    running = herd.submit(*project, "--gpus", "2", "--name", "train", "--", "sleep 120")
    herd.wait_state(running, "running")
    queued = herd.submit(*project, "--gpus", "1", "--name", "next", "--", "true")
    held = herd.submit(*project, "--hold", "--gpus", "0", "--", "echo unnamed-command")
    herd.wait_state(failed, "failed")
    return {"failed": failed, "running": running, "queued": queued, "held": held}


def _rows_fit(page: Any) -> None:
    """Every row on one line, and the table inside the window: no sideways scrolling."""
    heights = page.eval_on_selector_all(
        "table.jobs tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height)"
    )
    assert heights and max(heights) <= ROW_MAX_PX, heights
    box = page.locator(".table-scroll")
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), "the table scrolls sideways"
    assert (
        page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]
    )


def test_at_700_px_a_row_is_one_line_with_its_other_actions_in_a_menu(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    page = board.page("/jobs?project=narrow")
    page.set_viewport_size({"width": 700, "height": 800})
    _rows_fit(page)
    queued = page.locator(f"#job-{jobs['queued']}")
    expect(queued.locator(".act-kill")).to_be_visible()  # (cancel) its first action
    expect(queued.locator(".act-front")).to_be_hidden()
    for hidden in ("th.col-pid", "th.col-cmd"):
        expect(page.locator(hidden)).to_be_hidden()
    held = page.locator(f"#job-{jobs['held']}")
    expect(held.locator("td.name")).to_contain_text("echo unnamed-command")  # no Command column
    queued.locator("summary").click()
    expect(queued.locator(".act-front")).to_be_visible()
    # a live refresh of the table (a busy queue: several a second) keeps the menu open
    page.evaluate(
        """() => { window.swaps = 0; document.addEventListener("htmx:afterSwap",
        (e) => { if (e.detail.target.id === "jobs-live") window.swaps++; }); }"""
    )
    page.evaluate("() => htmx.trigger(document.body, 'refresh')")
    page.wait_for_function("() => window.swaps > 0")
    expect(queued.locator(".act-front")).to_be_visible()
    held.locator("summary").click()  # one menu open at a time
    expect(queued.locator(".act-front")).to_be_hidden()
    expect(held.locator(".act-kill")).to_be_visible()  # (cancel: its first is release)
    page.keyboard.press("Escape")
    expect(held.locator(".act-kill")).to_be_hidden()
    queued.locator("summary").click()
    queued.locator(".act-front").click()  # an action from the menu is sent, and it closes
    expect(page.locator("#flash .flash.ok")).to_contain_text(f"job {jobs['queued']}: moved")
    expect(queued.locator(".act-front")).to_be_hidden()
    page.close()


def test_at_1024_px_the_command_stays_and_the_pid_goes(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    page = board.page("/jobs?project=narrow")
    page.set_viewport_size({"width": 1024, "height": 800})
    _rows_fit(page)
    expect(page.locator("th.col-cmd")).to_be_visible()
    expect(page.locator("th.col-pid")).to_be_hidden()
    expect(page.locator(f"#job-{jobs['held']} .name-cmd")).to_be_hidden()  # in its column
    expect(page.locator(f"#job-{jobs['running']} .act-pause")).to_be_hidden()
    page.close()


def test_at_1400_px_every_button_shows_in_its_row_as_before(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    page = board.page("/jobs?project=narrow")
    page.set_viewport_size({"width": 1400, "height": 800})
    running = page.locator(f"#job-{jobs['running']}")
    for action in ("kill", "pause", "retry", "prio-up", "prio-down"):
        expect(running.locator(f".act-{action}")).to_be_visible()
    expect(running.locator("summary")).to_be_hidden()
    expect(page.locator("th.col-pid")).to_be_visible()
    tops = running.locator("button").evaluate_all(
        "bs => bs.map(b => Math.round(b.getBoundingClientRect().top))"
    )
    assert len(set(tops)) == 1, tops  # on one line
    page.close()


def test_at_700_px_the_gpus_table_fits_the_window(board: Board, expect: Any) -> None:
    """A GPU's UUID took five lines of its row, and its buttons were out of the window."""
    page = board.page("/gpus")
    page.set_viewport_size({"width": 700, "height": 800})
    expect(page.locator("#gpu-0 .gpu-uuid")).to_have_attribute("title", re.compile("^GPU-"))
    assert page.locator(".table-scroll").evaluate("b => b.scrollWidth <= b.clientWidth")
    expect(page.locator("#gpu-0 td.actions button").first).to_be_in_viewport(ratio=1)
    page.close()


def test_the_jobs_page_says_the_queue_is_paused_and_resumes_it(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    page = board.page("/jobs?project=narrow")
    notice = page.locator("#queue-paused")
    expect(notice).to_have_count(0)
    board.herd.cli("pause")
    try:
        expect(notice).to_contain_text("The queue is paused: running jobs go on")  # live
        page.click("#queue-resume")
        expect(notice).to_have_count(0)
        assert board.herd.json("daemon", "status")["queue_paused"] is False
    finally:
        board.herd.cli("resume")
    page.close()
