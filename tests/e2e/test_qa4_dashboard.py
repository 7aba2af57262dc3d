"""A researcher's bug hunt in the dashboard: what a real browser found, one daemon for all.

Driven with Playwright and Debian's chromium, as test_dashboard.py does (its fixtures).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from test_dashboard import Board, browser, expect, open_board
from test_dashboard_pages import sse_events

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

SILENT_MS = 20_000
"""How long a page may take to say the daemon does not answer (it asks after 5 s, and gives
the ping 5 s more), with room for a loaded machine."""


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qa4") / "home", "2") as b:
        yield b


LINES = 400
BAR = """import sys, time
for i in range(LINES):
    for step in range(30):
        sys.stdout.write(f"\\repoch {i} step {step}/30")
    sys.stdout.write(f"\\repoch {i} done " + "x" * 80 + "\\n")
    sys.stdout.flush()
    time.sleep(0.01)
""".replace("LINES", str(LINES))
"""A training loop's progress bar: each line drawn 31 times (`\\r`), then ended."""
MARKER = '<i class="cr"></i>'
SHOWN = "".join(f"epoch {i} done {'x' * 80}\n" for i in range(LINES))


def _progress_job(board: Board, folder: Path, *options: str) -> int:
    script = folder / "bar.py"
    script.write_text(BAR)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    return board.submit("--gpus", "0", *options, "--", command)


def test_a_log_stream_sends_each_lines_last_drawing(board: Board, tmp_path: Path) -> None:
    """Every `\\r` went to the page as a marker (12,000 here), each wiped there: a fast bar
    kept the page busy. An event now holds each line's last drawing, a marker only where a
    line began in an earlier event or may be redrawn by a later one."""
    job_id = _progress_job(board, tmp_path)
    board.herd.wait_state(job_id, "succeeded", timeout=60)
    events = sse_events(board.herd, f"/ui/jobs/{job_id}/stream?attempt=1", {}, until="end")
    logs = [data for name, _, data in events if name == "stdout"]
    assert max(data.count(MARKER) for data in logs) <= 2
    shown = ""  # as logs.js shows it: a marker wipes its line so far
    for i, text in enumerate("".join(logs).split(MARKER)):
        shown = (shown[: shown.rfind("\n") + 1] if i else shown) + text
    assert shown == SHOWN


def test_a_page_open_on_a_chatty_job_folds_its_lines(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """The browser lays a block's lines out together: each text added laid the whole log out
    again (80 ms a message at 500 KiB), and a page open on a chatty job froze. Whole lines
    are folded into inline-blocks, each laid out once; what the log shows, and what a copy
    of it holds, is unchanged: each line's last drawing, once."""
    go = tmp_path / "go"
    gate = board.submit("--gpus", "0", "--", f"while [ ! -e {go} ]; do sleep 0.05; done")
    job_id = _progress_job(board, tmp_path, "--after", str(gate))
    page = board.page(f"/jobs/{job_id}")  # open before the job writes: it sees it all come
    expect(page.locator("#job-state")).to_have_text("queued")
    go.touch()
    log = page.locator("#log-stdout")
    expect(log).to_contain_text(f"epoch {LINES - 1} done", timeout=60_000)
    assert page.locator("#log-stdout .lines").count() >= 1  # 38 KB: folded at 16 KiB
    assert page.locator("#log-stdout i.cr").count() == 0
    assert log.evaluate("pre => pre.innerText") == SHOWN
    assert log.evaluate("pre => pre.textContent") == SHOWN
    page.close()


def test_a_stopped_daemon_shows_the_banner_until_it_answers(board: Board, expect: Any) -> None:
    """A daemon stopped (SIGSTOP) or stuck takes connections and answers nothing: no stream
    failed and no request ended, so the page said nothing, and a button clicked did nothing
    to be seen. The banner says the daemon does not answer, and goes once it does."""
    job_id = board.submit("--hold", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    banner = page.locator("#conn-banner")
    expect(page.locator("#job-state")).to_have_text("held")
    daemon = psutil.Process(board.herd.pid)
    daemon.suspend()
    try:
        page.click("#job-head .act-prio-up")
        expect(banner).to_have_text("Reconnecting to the daemon…", timeout=SILENT_MS)
    finally:
        daemon.resume()
    expect(banner).to_be_hidden(timeout=SILENT_MS)
    # The click waited, and went through once the daemon answered.
    expect(page.locator("#flash")).to_contain_text(f"job {job_id}: priority", timeout=SILENT_MS)
    assert board.herd.job(job_id)["priority"] == 1
    page.close()
