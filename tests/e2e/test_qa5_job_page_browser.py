"""A job's page in chromium: a running job's time counting on, and the page of a job removed
with its own button going to the jobs list. One daemon (2 fake GPUs, TCP listener) and one
browser serve the module."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

from gpuherd.core.units import format_duration

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qa5") / "home", "2") as b:
        yield b


def test_a_running_jobs_time_counts_on(board: Board, expect: Any) -> None:
    """It stood still at the time the page was drawn: the head is drawn again only when the
    job changes. Counted in the browser (no request), written as the daemon writes it."""
    job = board.submit("--gpus", "1", "--", "sleep 120")
    board.herd.wait_state(job, "running")
    asked: list[str] = []
    page = board.page(
        f"/jobs/{job}", before=lambda p: p.on("request", lambda r: asked.append(r.url))
    )
    shown = page.locator("#job-runtime")
    drawn = float(shown.get_attribute("data-ran"))
    first = shown.inner_text()
    expect(shown).not_to_have_text(first)  # it moved on, within a second or so
    later = float(shown.inner_text().removesuffix("s"))
    assert drawn < later < drawn + 10
    assert not [url for url in asked if f"/ui/jobs/{job}?" in url]  # counted, not fetched
    # Longer times, as the daemon writes them (a head drawn again: its own seconds).
    for ran in (59.97, 3725.0, 90061.0):
        page.evaluate(
            """(ran) => { const old = document.getElementById("job-runtime");
                          const drawn = old.cloneNode(true); drawn.dataset.ran = ran;
                          old.replaceWith(drawn); }""",
            ran,
        )
        expect(shown).not_to_have_text(first)
        words = {format_duration(ran + tenths / 10) for tenths in range(0, 40)}
        expect(shown).to_have_text(re.compile("|".join(map(re.escape, words))))
        first = shown.inner_text()
    board.herd.cli("pause", str(job))  # paused: its time stands still, no span to count
    expect(page.locator("#job-state")).to_have_text("paused")
    expect(shown).to_have_count(0)
    board.herd.cli("kill", str(job))
    page.close()


def test_removing_a_job_from_its_page_goes_to_the_jobs_list(board: Board, expect: Any) -> None:
    """It said `job N: removed`, then `no job N` in red, and stayed on the removed job's page
    with its buttons and downloads (404)."""
    job = board.submit("--gpus", "0", "--", "exit 3")
    board.herd.wait_state(job, "failed")
    dialogs: list[str] = []
    page = board.page(f"/jobs/{job}", dialogs=dialogs, accept=True)
    page.locator("#job-head .act-rm").click()
    page.wait_for_url(re.compile(rf"/jobs\?removed={job}$"))
    expect(page.locator("#removed")).to_have_text(f"job {job}: removed")
    assert dialogs and "Remove" in dialogs[0]  # asked first, as before
    expect(page.locator(".flash.error")).to_have_count(0)
    expect(page.locator(f"#job-{job}")).to_have_count(0)
    page.close()
