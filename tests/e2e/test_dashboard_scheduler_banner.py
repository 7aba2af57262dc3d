"""The dashboard's pages say that the scheduler fails, in a banner atop each, as it starts
failing and until passes work again, also the pages that fetch nothing else on a timer (a
finished job's, the submit form): they ask for the banner every 5 s (api/scheduler_banner.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_dashboard import browser, expect, open_board

from scheduler_fault import FAULT, break_passes, fault_env, mend

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

POLLED_MS = 30_000
"""Long enough for the page's 5-s poll, and for a mended pass's retry (2, 4, 8 s ...)."""


def test_the_banner_comes_and_goes_on_pages_already_open(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    with open_board(browser, tmp_path / "home", "1", fault_env(tmp_path)) as board:
        herd = board.herd
        done = board.submit("--", "true")
        herd.wait_state(done, "succeeded")
        pages = [board.page(f"/jobs/{done}"), board.page("/submit"), board.page("/gpus")]
        for page in pages:
            expect(page.locator("#scheduler")).to_be_empty()
            page.evaluate("window.notReloaded = true")
        break_passes(herd)
        stuck = board.submit("--", "true")  # (a pass for it fails)
        for page in pages:
            banner = page.locator("#scheduler-failing")
            expect(banner).to_contain_text(
                "Not starting: the scheduler fails since ", timeout=POLLED_MS
            )
            expect(banner).to_contain_text(f"({FAULT})")
            expect(banner).to_contain_text(str(herd.home / "daemon.log"))
            assert (
                banner.evaluate("box => getComputedStyle(box).cursor") == "default"
            )  # (no .flash pointer: no click puts it away)
        mend(herd)
        herd.wait_state(stuck, "succeeded", timeout=POLLED_MS / 1000)
        for page in pages:
            expect(page.locator("#scheduler-failing")).to_have_count(0, timeout=POLLED_MS)
            assert page.evaluate("window.notReloaded") is True
            page.close()
