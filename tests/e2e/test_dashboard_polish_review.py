"""What a review of docs/dashboard.md in a browser found: the jobs table wider than the window
at 700 and 1024 px on a page of every kind of row (each filter's page fitted); a retry from a
finished job's page answering nothing (the page loaded again on the new attempt, its message
gone); empty log boxes saying nothing; an older attempt's logs under the latest one's facts
with nothing saying whose they are; and a sweep's "92%" beside a full bar (3 points failed).
One daemon (4 fake GPUs, TCP listener) and one browser serve the module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

from conftest import wait_for

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

ROW_MAX_PX = 52
"""A row of one line of buttons, its reason why it waits in two lines of small text (as
test_qaui2_narrow_jobs.py): two lines of buttons made it about 65 px."""


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("review") / "home", "4") as b:
        yield b


@pytest.fixture(scope="module")
def mixed(board: Board) -> dict[str, int]:
    """The review's page 1 of /jobs: running jobs, a 4-GPU job waiting for them, a failed job
    and two cancelled at once (dependency_failed), a held job, and a sweep's jobs of long
    names and commands, all in project `mix`."""
    herd, project = board.herd, ("--project", "mix")
    failed = herd.submit(*project, "--gpus", "0", "--name", "broken", "--", "false")
    herd.wait_state(failed, "failed")
    cancelled = [
        herd.submit(*project, "--gpus", "0", "--after", str(failed), "--", "true") for _ in "ab"
    ]
    command = "python3 -c 'import sys' --lr 0.01 --opt sgd --a-long-flag-here"
    for seed in range(1, 7):
        name = f"lr-grid/lr=1e-2,opt=sgd,seed={seed}"
        herd.wait_state(
            herd.submit(*project, "--gpus", "0", "--name", name, "--", command), "succeeded"
        )
    held = herd.submit(*project, "--hold", "--gpus", "2", "--name", "held-one", "--", "true")
    running = [
        herd.submit(*project, "--gpus", "1", "--name", name, "--", "sleep 600")
        for name in ("shareA", "shareB")
    ]
    for job in running:
        herd.wait_state(job, "running")
    waiting = herd.submit(*project, "--gpus", "4", "--name", "need4", "--", "true")
    assert herd.wait_state(cancelled[1], "cancelled")["outcome"] == "dependency_failed"
    return {"cancelled": cancelled[0], "held": held, "waiting": waiting, "running": running[0]}


@pytest.mark.parametrize("width", [700, 1024])
def test_a_page_of_every_kind_of_row_fits_the_window(
    board: Board, mixed: dict[str, int], expect: Any, width: int
) -> None:
    """Before: at 700 px the table was 701 px in a box of 676, and at 1024 px 1009 in 979;
    the ⋯ buttons ended at x = 739 and 1054, cut off by the window."""
    page = board.page("/jobs?project=mix")
    page.set_viewport_size({"width": width, "height": 800})
    waiting = page.locator(f"#job-{mixed['waiting']}")
    expect(waiting.locator("td.reason")).to_have_text("waiting for 4 free GPUs")
    box = page.locator(".table-scroll")
    widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] <= widths[1], widths  # nothing to scroll to
    heights = page.eval_on_selector_all(
        "table.jobs tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height)"
    )
    assert len(heights) == 13 and max(heights) <= ROW_MAX_PX, heights
    for row in page.locator("table.jobs tbody tr").all():  # each row's last button shown whole
        expect(row.locator("td.actions summary")).to_be_in_viewport(ratio=1)
    # `dependency_failed`, wider than its column, reads shorter; whole in its title and text
    exit_cell = page.locator(f"#job-{mixed['cancelled']} td.exit")
    expect(exit_cell).to_have_attribute("title", re.compile("^dependency_failed: "))
    expect(exit_cell).to_have_text("dependency_failed")  # what a copy finds
    shown = exit_cell.locator("[data-short]").evaluate(
        "s => getComputedStyle(s, '::after').content"
    )
    assert shown == '"dep. failed"', shown
    assert exit_cell.evaluate("c => c.scrollWidth <= c.clientWidth")
    page.close()


def test_the_short_outcome_is_shown_from_1200_px_whole(
    board: Board, mixed: dict[str, int], expect: Any
) -> None:
    page = board.page("/jobs?project=mix")  # 1280 px wide: it wraps after its underscore
    cell = page.locator(f"#job-{mixed['cancelled']} td.exit [data-short]")
    assert cell.evaluate("s => getComputedStyle(s, '::after').content") == "none"
    expect(cell).to_be_visible()
    page.close()


def _empty_words(log: Any) -> str:
    words: str = log.evaluate("pre => getComputedStyle(pre, '::before').content")
    return words


def test_retry_on_a_finished_jobs_page_says_what_it_did(board: Board, expect: Any) -> None:
    """The page loads again on the new attempt: its answer went with the old page."""
    job_id = board.submit("--gpus", "0", "--", "sh", "-c", "echo attempt; exit 3")
    board.herd.wait_state(job_id, "failed")
    page = board.page(f"/jobs/{job_id}")
    with page.expect_navigation():  # the page following attempt 2
        page.click("#job-head .act-retry")
    expect(page.locator("#flash .flash.ok")).to_have_text(f"job {job_id}: queued again")
    expect(page.locator("table.attempts tbody tr")).to_have_count(2)
    page.reload()  # said once: not again on the next load
    expect(page.locator("#job-head")).to_be_visible()
    expect(page.locator("#flash .flash")).to_have_count(0)
    page.close()


def test_an_empty_log_says_why_until_its_text_comes(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    script = f"while [ ! -e {flag} ]; do sleep 0.05; done; echo hello-late"
    job_id = board.submit("--hold", "--gpus", "0", "--", "sh", "-c", script)
    page = board.page(f"/jobs/{job_id}")
    stdout, stderr = page.locator("#log-stdout"), page.locator("#log-stderr")
    assert _empty_words(stdout) == '"nothing yet: the job has not started"'
    board.herd.cli("release", str(job_id))
    board.herd.wait_state(job_id, "running")
    page.wait_for_function(  # said again as the head follows the job
        "() => document.getElementById('log-stdout').dataset.empty === 'nothing yet'"
    )
    flag.touch()
    expect(stdout).to_have_text("hello-late\n")  # the live log, as before
    assert _empty_words(stdout) == "none"
    board.herd.wait_state(job_id, "succeeded")
    page.reload()
    expect(stdout).to_have_text("hello-late\n")
    assert _empty_words(stderr) == '"(empty)"'  # it wrote nothing there
    page.close()


def test_an_older_attempts_logs_say_whose_they_are(board: Board, expect: Any) -> None:
    job_id = board.submit("--gpus", "0", "--", "false")
    board.herd.wait_state(job_id, "failed")
    board.herd.cli("retry", str(job_id))
    assert board.herd.wait_state(job_id, "failed")["attempt"] == 2
    page = board.page(f"/jobs/{job_id}?attempt=1")
    expect(page.locator(".log-box h2 .log-attempt")).to_have_text(["attempt 1 of 2"] * 2)
    page.goto(f"{board.base}/jobs/{job_id}")
    expect(page.locator(".log-box h2 .log-attempt")).to_have_text(["attempt 2 of 2"] * 2)
    page.close()


def test_a_sweeps_percentage_says_what_it_counts(board: Board, tmp_path: Path) -> None:
    """3 of 4 points succeeded, 1 failed: the bar is full, and 75% is of those succeeded."""
    args = ["sweep", "test {x} -lt 4", "-p", "x", "1", "2", "3", "4", "--gpus", "0"]
    ids = board.herd.cli(*args, "--name", "pct-grid", "-q", cwd=tmp_path).stdout.split()
    for job_id in ids:
        board.herd.wait_state(int(job_id), "succeeded", "failed")
    for path in ("/sweeps", "/sweeps/pct-grid"):
        html = board.herd.page(path)
        assert re.search(r'<span class="pct"[^>]*>75%</span> *<span [^>]*>succeeded</span>', html)


def test_a_bulk_actions_rows_are_no_longer_ticked_once_it_is_done(
    board: Board, expect: Any
) -> None:
    """They stayed ticked: the next bulk button acted on them again, nothing ticked anew."""
    held = [board.submit("--hold", "--gpus", "0", "--project", "ticks", "--", "true") for _ in "ab"]
    page = board.page("/jobs?project=ticks")
    for job_id in held:
        page.check(f'#job-{job_id} input[name="ids"][form="bulk"]')
    page.click('#bulk button[value="release"]')
    expect(page.locator("#flash .flash.ok").first).to_have_text(f"jobs {held[0]}-{held[1]}: queued")
    for job_id in held:
        expect(page.locator(f'#job-{job_id} input[name="ids"][form="bulk"]')).not_to_be_checked()
    expect(page.locator(".select-all").first).not_to_be_checked()
    page.close()


def test_a_box_ticked_while_a_bulk_answer_is_on_its_way_stays_ticked(
    board: Board, expect: Any
) -> None:
    """The answer to a bulk button unticked every box, also one the user had ticked since the
    click (the next choice, lost); only the rows the button was sent for go now. (CI once:
    two bulk clicks with no row ticked, a tick in between, and the second answer took it.)"""
    first, second = (
        board.submit("--hold", "--gpus", "0", "--project", "late", "--", "true") for _ in "ab"
    )
    page = board.page("/jobs?project=late")
    held: list[Any] = []
    page.route("**/ui/jobs/act", lambda route: held.append(route))
    page.check(f"#job-{first} input.pick")
    page.click('#bulk button[value="release"]')
    wait_for(lambda: held or page.evaluate("0"), what="the release on its way")  # runs routes
    page.check(f"#job-{second} input.pick")
    held[0].continue_()
    expect(page.locator("#flash .flash.ok").first).to_have_text(f"job {first}: queued")
    expect(page.locator(f"#job-{first} input.pick")).not_to_be_checked()
    expect(page.locator(f"#job-{second} input.pick")).to_be_checked()
    assert board.herd.job(second)["state"] == "held"
    page.close()
