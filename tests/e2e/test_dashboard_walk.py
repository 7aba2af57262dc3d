"""What a new user walking docs/dashboard.md ran into: `gpuherd ui --open` with no browser to
open, and the jobs page's buttons for ticked rows asking to confirm with no row ticked.

`ui --open` runs the console script against a real daemon; the buttons drive Debian's
chromium, as test_dashboard.py does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from test_dashboard import browser, expect, open_board

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


def _without_browsers(herd: Herd, folder: Path, browser_command: str) -> dict[str, str]:
    """The CLI's environment with no display and no browser on PATH but `browser_command`
    (BROWSER, which Python's webbrowser tries first)."""
    env = {k: v for k, v in herd.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    empty = folder / "no-browsers"
    empty.mkdir(exist_ok=True)
    return {**env, "PATH": str(empty), "BROWSER": browser_command}


def test_ui_open_says_when_no_browser_can_be_opened(daemon: Herd, tmp_path: Path) -> None:
    """On a server reached over SSH (no display, no browser) `ui --open` printed the URL and
    silently opened nothing."""
    env = _without_browsers(daemon, tmp_path, str(tmp_path / "no-such-browser"))
    answer = daemon.cli("ui", "--listen", "127.0.0.1:0", "--open", env=env)
    url = daemon.cli("ui", "--url").stdout.strip()
    assert answer.stdout == f"dashboard: {url}\n"
    assert answer.stderr.endswith(
        ": warning: no web browser found here: open the URL above in yours\n"
    ), answer.stderr


def test_ui_open_opens_the_url_in_the_browser_there_is(daemon: Herd, tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    os.chmod(fake, 0o755)
    env = _without_browsers(daemon, tmp_path, str(fake))
    answer = daemon.cli("ui", "--listen", "127.0.0.1:0", "--open", env=env)
    url = daemon.cli("ui", "--url").stdout.strip()
    # At a one-time link, not the token's URL: a browser's command line is seen by `ps`.
    base, _, code = opened.read_text().partition("?code=")
    assert (base, bool(code), answer.stderr) == (url.split("?")[0], True, "")


def test_a_bulk_button_with_no_row_ticked_asks_nothing(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    """With no row ticked, "Kill the selected jobs?" was asked, and a yes then got "no job
    selected". Now the answer comes at once; with a row ticked the question is asked."""
    with open_board(browser, tmp_path / "home", "1") as board:
        job_id = board.submit("--gpus", "0", "--", "sleep", "60")
        board.herd.wait_state(job_id, "running")
        asked: list[str] = []
        page = board.page("/jobs", asked)
        for action in ("kill", "rm"):
            page.click(f'#bulk button[value="{action}"]')
            expect(page.locator("#flash")).to_have_text(
                "no job selected: tick the jobs to act on first"
            )
        assert asked == []
        page.check(f'input.pick[value="{job_id}"]')
        page.click('#bulk button[value="kill"]')
        assert asked == ["Kill the 1 selected job? The work of those running is lost."]
        assert board.herd.job(job_id)["state"] == "running"  # declined: nothing sent
        page.close()
        board.herd.cli("kill", str(job_id))


def test_a_bulk_button_says_how_many_jobs_are_ticked(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    """ "Kill the selected jobs?" did not say how many: a "select all" ticks the whole page,
    maybe more jobs than the user had in mind. Declined, nothing is sent."""
    with open_board(browser, tmp_path / "home", "1") as board:
        ids = board.herd.submit_lines(["true"] * 3, "--hold")
        asked: list[str] = []
        page = board.page("/jobs", asked)
        page.check("input.select-all")
        for action in ("kill", "retry", "rm"):
            page.click(f'#bulk button[value="{action}"]')
        page.uncheck(f'input.pick[value="{ids[0]}"]')
        page.click('#bulk button[value="rm"]')
        assert asked == [
            "Kill the 3 selected jobs? The work of those running is lost.",
            "Retry the 3 selected jobs? Those running are killed and start again.",
            "Remove the 3 selected jobs, logs and all?",
            "Remove the 2 selected jobs, logs and all?",
        ]
        assert [board.herd.job(i)["state"] for i in ids] == ["held"] * 3  # declined
        page.close()
