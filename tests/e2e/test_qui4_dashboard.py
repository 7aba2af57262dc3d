"""A job's page: what it asks for in `gpuherd show`'s words (it said `asked for 1 of GPU 2,3
only`, and nothing of --exclusive or --ram), and its attempts' times whole on a narrow window;
the jobs page saying a `?state=` it does not know (it listed every job, as if filtered)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


def _asked(herd: Herd, job_id: int) -> str:
    page = herd.page(f"/jobs/{job_id}")
    found = re.search(r'<span class="muted" id="job-requested">\(asked for (.*?)\)</span>', page)
    assert found, page[page.index("<dt>GPUs</dt>") :][:300]
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))  # (its sizes kept whole)


def _shown(herd: Herd, job_id: int) -> str:
    line = next(x for x in herd.cli("show", str(job_id)).stdout.splitlines() if "requested" in x)
    return line.split("requested", 1)[1].strip()


def test_a_jobs_page_says_what_it_asks_for_as_show_does(daemon: Herd) -> None:
    one = daemon.submit("--hold", "--gpus", "1", "--only-gpus", "2", "--", "true")
    some = ("--gpus", "2", "--only-gpus", "0,1,3", "--mem", "1GiB", "--exclusive", "--ram", "4GiB")
    many = daemon.submit("--hold", *some, "--", "true")
    plain = daemon.submit("--hold", "--gpus", "0", "--", "true")
    assert _asked(daemon, one) == "1 GPU, GPU 2 only"
    said = "2 GPUs, of GPUs 0,1,3 only, 1.0 GiB each, exclusive, 4.0 GiB host memory"
    assert _asked(daemon, many) == said
    assert _asked(daemon, plain) == "0 GPUs"
    for job in (one, many, plain):
        assert _asked(daemon, job) == _shown(daemon, job)  # one wording, not two


def test_the_jobs_page_says_a_state_it_does_not_know(daemon: Herd) -> None:
    held = daemon.submit("--hold", "--gpus", "0", "--", "true")
    done = daemon.submit("--gpus", "0", "--", "true")
    daemon.wait_state(done, "succeeded")
    states = "queued, held, running, paused, succeeded, failed, killed, cancelled, lost"

    def shown(query: str) -> tuple[list[str], list[int]]:
        page = daemon.page(f"/jobs?{query}")
        said = [html.unescape(x) for x in re.findall(r'id="state-error">([^<]*)<', page)]
        return said, sorted(int(x) for x in re.findall(r'<tr id="job-(\d+)"', page))

    said = f"unknown state 'runing': use one of {states}; showing jobs of any state"
    assert shown("state=runing") == ([said], [held, done])
    said = f"unknown states 'bogus', 'x': use one of {states}; showing held jobs"
    assert shown("state=held&state=bogus&state=x") == ([said], [held])
    assert shown("state=SUCCEEDED") == ([], [done])  # as the CLI's --state takes it
    assert shown("state=held") == ([], [held])


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qui4") / "home", "1") as b:
        yield b


def test_at_700_px_an_attempts_times_break_only_between_date_and_time(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """The attempts table broke `2026-12-03` at its hyphens, over three lines."""
    job = board.herd.submit("--gpus", "0", "--retries", "1", "--", "exit 3")
    board.herd.wait_state(job, "failed")
    page = board.page(f"/jobs/{job}")
    page.set_viewport_size({"width": 700, "height": 800})
    cells = page.locator("table.attempts tbody td.when")
    expect(cells).to_have_count(4)  # started and ended of its 2 attempts
    # the lines the date (its first 10 characters) is drawn on, in each cell
    lines = cells.evaluate_all(
        """cells => cells.map(cell => {
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            const text = walker.nextNode();
            const range = document.createRange();
            range.setStart(text, 0);
            range.setEnd(text, 10);
            return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
        })"""
    )
    assert lines == [1, 1, 1, 1]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", cells.first.inner_text().strip())
    page.close()
