"""The dashboard on a narrow window, in chromium: a row's likeliest action beside its ⋯ menu,
the menu from the keyboard, the sweep filter's name whole at 1024 px, and a failed job's last
stderr lines in the first screen of its page at 700 px. One daemon (2 fake GPUs, TCP
listener) and one browser serve the module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

NARROW = {"width": 700, "height": 800}


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qui3") / "home", "2") as b:
        yield b


@pytest.fixture(scope="module")
def jobs(board: Board) -> dict[str, int]:
    """A held (of 2 GPUs), a paused and a failed job (of 40 lines of stderr), of project `q`."""
    herd, project = board.herd, ("--project", "q")
    noisy = "for i in $(seq 1 40); do echo noise $i >&2; done; echo 'ValueError: bad lr' >&2"
    noisy += "; exit 1"
    failed = herd.submit(*project, "--gpus", "0", "--name", "broken", "--", noisy)
    paused = herd.submit(*project, "--gpus", "1", "--name", "train", "--", "sleep 120")
    held = herd.submit(*project, "--hold", "--gpus", "2", "--name", "later", "--", "true")
    herd.wait_state(paused, "running")
    herd.cli("pause", str(paused))
    herd.wait_state(paused, "paused")
    herd.wait_state(failed, "failed")
    return {"failed": failed, "paused": paused, "held": held}


def test_at_700_px_a_row_shows_the_action_most_likely_wanted(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    """A held job showed *cancel*, a paused one *kill*: release and resume were in the menu."""
    page = board.page("/jobs?project=q")
    page.set_viewport_size(NARROW)
    for job, first, in_menu in (("held", "release", "kill"), ("paused", "resume", "kill")):
        row = page.locator(f"#job-{jobs[job]}")
        expect(row.locator(f".act-{first}")).to_be_in_viewport(ratio=1)
        expect(row.locator(f".act-{in_menu}")).to_be_hidden()
    expect(page.locator(f"#job-{jobs['failed']} .act-retry")).to_be_visible()
    page.locator(f"#job-{jobs['held']} .act-release").click()  # no question: it is sent
    expect(page.locator("#flash .flash.ok")).to_contain_text(f"job {jobs['held']}: queued")
    board.herd.cli("hold", str(jobs["held"]))  # (it waits for the paused job's GPU)
    page.close()


def test_the_menu_from_the_keyboard(board: Board, jobs: dict[str, int], expect: Any) -> None:
    """Named for a screen reader, opened by Enter, walked by Tab, closed by Escape (the focus
    back on ⋯) and by Tab past its last action (it stayed open over the next rows)."""
    page = board.page("/jobs?project=q")
    page.set_viewport_size(NARROW)
    row = page.locator(f"#job-{jobs['paused']}")
    more, menu = row.locator("summary"), row.locator("details.more-actions")
    expect(more).to_have_attribute("aria-label", f"more actions for job {jobs['paused']}")
    more.focus()
    page.keyboard.press("Enter")
    expect(row.locator(".act-kill")).to_be_visible()
    page.keyboard.press("Tab")
    expect(row.locator(".act-kill")).to_be_focused()
    page.keyboard.press("Escape")
    expect(row.locator(".act-kill")).to_be_hidden()
    expect(more).to_be_focused()
    page.keyboard.press("Enter")
    for _ in range(row.locator(".menu button").count()):
        page.keyboard.press("Tab")
    expect(row.locator(".act-prio-down")).to_be_focused()  # the last
    page.keyboard.press("Tab")  # on to the next row
    expect(menu).not_to_have_attribute("open", "")
    page.close()


def test_at_1024_px_the_sweep_filter_shows_the_whole_name(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """It was cut to "lr-seed-gri" on a line with room to spare."""
    name = "lr-seed-grid"
    board.herd.cli("sweep", "echo {lr}", "--gpus", "0", "--name", name, "-p", "lr", "1",
                   "--results-dir", str(tmp_path / "res"))  # fmt: skip
    page = board.page(f"/jobs?sweep={name}")
    page.set_viewport_size({"width": 1024, "height": 800})
    select = page.locator("#sweep-filter")
    expect(select).to_have_attribute("title", f"sweep {name}")
    room, text = select.evaluate(
        """s => { const probe = document.createElement("span");
        probe.style.font = getComputedStyle(s).font;
        probe.textContent = s.selectedOptions[0].textContent;
        document.body.appendChild(probe);
        const text = probe.getBoundingClientRect().width; probe.remove();
        const style = getComputedStyle(s);
        return [s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
                text]; }"""
    )
    assert room >= text + 16, (room, text)  # (16: the select's arrow)
    page.close()


def test_at_700_px_a_failed_jobs_last_stderr_lines_are_in_the_first_screen(
    board: Board, jobs: dict[str, int], expect: Any
) -> None:
    """They were about two screens down, below the job's facts."""
    page = board.page(f"/jobs/{jobs['failed']}")
    page.set_viewport_size(NARROW)
    failure = page.locator("#job-failure")
    expect(failure).to_contain_text("ValueError: bad lr")
    expect(failure).not_to_contain_text("noise 34")  # its last 6 lines
    expect(failure.locator("pre")).to_be_in_viewport(ratio=1)
    failure.get_by_role("link", name="all of it below").click()
    expect(page.locator("#log-stderr")).to_be_in_viewport()
    page.close()
