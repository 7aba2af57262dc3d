"""On a GPU server shared with colleagues who do not use gpuherd, the dashboard says who holds
each GPU as `gpuherd gpus` does (docs/dashboard.md, "Pages"): it showed other users'
processes only as a count, and nothing of memory no listed process holds (another
container's), so a GPU that looked idle took no job and nothing said why.

Real daemons on fake GPUs from a state file; the pages' HTML over the socket, then their look
at 1280 and 800 px in Debian's chromium (tests/e2e/test_dashboard.py's fixtures)."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import browser, expect, open_board
from test_trial_dash_gpu_sharing import _card, _row

from conftest import NO_SUCH_PIDS, Herd, wait_for

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

A100 = {"name": "NVIDIA A100-SXM4-80GB", "memory_total": "80GiB"}
UNLISTED = "70.0 GiB used by processes not listed (another container?)"


@pytest.fixture
def colleague() -> Iterator[int]:
    """A real process (its user can be read): a colleague's job, as the state file lists it."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def shared_server(folder: Path, colleague: int, count: int) -> Path:
    """A state file of `count` GPUs: four processes on GPU 0 (one the colleague's, one whose
    memory is not reported), 70 GiB in use by no listed process on GPU 1."""
    first, second, third = NO_SUCH_PIDS
    processes = [
        {"pid": colleague, "memory": "20GiB"},
        {"pid": first, "memory": "1.5GiB"},
        {"pid": second, "memory": "2GiB"},
        {"pid": third},
    ]
    gpus = [{**A100, "processes": processes}, {**A100, "memory_used": "70GiB"}]
    path = folder / "gpus.json"
    path.write_text(json.dumps({"gpus": gpus + [A100] * (count - 2)}))
    return path


def test_the_pages_say_who_holds_each_gpu_as_gpuherd_gpus_does(
    herd: Herd, tmp_path: Path, colleague: int
) -> None:
    herd.start("--fake-gpus", str(shared_server(tmp_path, colleague, 3)))
    user = pwd.getpwuid(os.getuid()).pw_name
    first, second, third = NO_SUCH_PIDS
    said = [
        f"{colleague} ({user}, 20.0 GiB)",
        f"{first} (?, 1.5 GiB)",
        f"{second} (?, 2.0 GiB)",
        f"{third} (?)",
    ]
    wait_for(lambda: str(colleague) in herd.cli("gpus").stdout, what="the processes listed")
    assert ", ".join(said) in herd.cli("gpus").stdout  # the CLI's words, which the pages share

    table = herd.page("/ui/gpus")
    row = _row(table, 0)
    for process in said[:3]:  # three shown, one a line; all of them in the tooltip
        assert f'<span class="nowrap">{process}' in row
    assert f'<span class="nowrap">{said[3]}' not in row
    assert "+1 more" in row and f'{", ".join(said)}">' in row
    assert "not listed" not in row
    assert UNLISTED in _row(table, 1)
    assert "not listed" not in _row(table, 2) and "foreign-procs" not in _row(table, 2)

    overview = herd.page("/")
    card = _card(overview, 0)
    assert "Other users: " in card and said[0] in card and "+1 more" in card
    assert 'Other users: <span class="foreign-unlisted"' in _card(overview, 1)
    assert UNLISTED in _card(overview, 1)
    assert "Other users" not in _card(overview, 2)


FITS = """(selector) => [...document.querySelectorAll(selector)].every(
  (box) => box.scrollWidth <= box.clientWidth)"""
LINES = """(selector) => [...document.querySelectorAll(selector)].map(
  (span) => span.getClientRects().length)"""


def test_eight_gpus_with_who_holds_them_fit_a_1280_px_window(
    browser: Any, expect: Any, tmp_path: Path, colleague: int
) -> None:
    state = shared_server(tmp_path, colleague, 8)
    with open_board(browser, tmp_path / "home", str(state)) as board:
        for _ in range(7):  # GPUs 1-7 busy with gpuherd's jobs
            board.submit("--", "sleep", "600")
        page = board.page("/gpus")  # 1280 px wide
        foreign = page.locator("#gpu-0 td.foreign")
        expect(foreign).to_contain_text(f"{colleague} (")
        expect(foreign).to_contain_text("+1 more")
        tooltip = foreign.locator(".foreign-procs").get_attribute("title")
        assert f"{NO_SUCH_PIDS[2]} (?)" in tooltip  # the fourth, not shown
        expect(page.locator("#gpu-1 td.foreign")).to_have_text(UNLISTED)
        expect(page.locator("table.gpus tbody tr")).to_have_count(8)
        assert page.evaluate(FITS, ".table-scroll, html")  # the table fits: no scrolling
        lines = page.evaluate(LINES, "table.gpus td .nowrap")  # memory, processes: unwrapped
        assert len(lines) >= 8 + 4 and set(lines) == {1}
        page.set_viewport_size({"width": 800, "height": 600})
        assert page.evaluate(FITS, "html")  # narrow: the table scrolls in its box, if at all
        expect(page.locator("#gpu-1 td.foreign")).to_have_text(UNLISTED)

        overview = board.page("/")
        card = overview.locator('.card.gpu[data-gpu="0"] .foreign')
        expect(card).to_contain_text(f"Other users: {colleague} (")
        expect(overview.locator('.card.gpu[data-gpu="1"] .foreign')).to_have_text(
            f"Other users: {UNLISTED}"
        )
        assert overview.evaluate(FITS, ".card.gpu, html")
        for tab in (page, overview):
            tab.close()
