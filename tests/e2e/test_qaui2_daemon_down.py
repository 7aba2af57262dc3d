"""A button pressed while the daemon is down says, where it was pressed, that it was not done.

Before, only the banner ("Reconnecting to the daemon…") showed: nothing said the
click had been lost, and a message of an earlier action ("job 3: held") stayed in view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_dashboard import browser, expect, open_board

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

NOT_DONE = "not done: the daemon did not answer"


def test_an_action_while_the_daemon_is_down_says_it_was_not_done(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    with open_board(browser, tmp_path / "home", "1") as board:
        herd = board.herd
        job_id = board.submit("--hold", "--gpus", "0", "--", "true")
        jobs = board.page("/jobs?state=held")
        job = board.page(f"/jobs/{job_id}")
        job.click("#job-head .act-prio-up")  # done: its message shows, until the next
        expect(job.locator("#flash .flash.ok")).to_contain_text(f"job {job_id}")
        herd.cli("daemon", "stop")
        for page in (jobs, job):
            expect(page.locator("#conn-banner")).to_be_visible()
        jobs.click(f"#job-{job_id} .act-release")
        expect(jobs.locator(f"#job-{job_id} .not-done")).to_have_text(NOT_DONE)
        flash = jobs.locator("#flash .flash")
        expect(flash).to_have_text(
            "“release” was not done: the daemon could not be reached; "
            "press it again once the daemon is back."
        )
        job.click("#job-head .act-prio-down")
        expect(job.locator("#job-head .not-done")).to_have_text(NOT_DONE)
        expect(job.locator("#flash .flash.error")).to_contain_text("“prio −” was not done")
        expect(job.locator("#flash .flash.ok")).to_have_count(0)  # nothing says it was done
        herd.start("--fake-gpus", "1")
        assert herd.job(job_id)["state"] == "held"
        assert herd.job(job_id)["priority"] == 1  # the prio + before, not the prio − after
        for page in (jobs, job):
            page.close()
