"""What a review of the job, jobs and sweep pages found: a log whose file is gone (or is no
plain file) shown as `(empty)` by a download link that answered 404 or 403; `?page=` of 23
digits said as `page 1,000,000`, a page not asked for; `?attempt=-1` quoted as if no number
(`'-1'`) where `?attempt=0` is not; and a sweep's values broken at their hyphen at 390 px
(`1e-` above `4`) in a table that scrolls sideways anyway.
One daemon (2 fake GPUs, TCP listener) and one browser serve the module.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("gone") / "home", "2") as b:
        yield b


def _note(page: str, stream: str) -> str | None:
    """What a log box says above it in place of its text (`log-STREAM-none`), if anything."""
    found = re.search(rf'<p class="warn" id="log-{stream}-none">(.*?)</p>', page, re.S)
    return html.unescape(found.group(1)) if found else None


def _has_download(page: str, stream: str) -> bool:
    """Whether the log's heading links to its download."""
    return re.search(rf'href="/api/v1/jobs/\d+/log\?stream={stream}&amp;', page) is not None


def _log_refused(herd: Herd, job_id: int, stream: str) -> str:
    """`gpuherd log`'s error line for that log, without its `gpuherd: error: `."""
    which = ["--stderr"] if stream == "stderr" else []
    refused = herd.cli("log", str(job_id), *which, check=False)
    assert refused.returncode == 1 and refused.stderr.startswith("gpuherd: error: "), refused
    return refused.stderr.removeprefix("gpuherd: error: ").strip()


def test_a_log_file_gone_is_said_so_without_a_download_link(board: Board, tmp_path: Path) -> None:
    """`--output` deleted: both boxes (stderr went with stdout) said `(empty)` in grey."""
    herd = board.herd
    output = tmp_path / "out_%j.log"
    job_id = herd.submit("--gpus", "0", "-o", str(output), "--", "echo to-file; echo err >&2")
    herd.wait_state(job_id, "succeeded")
    written = tmp_path / f"out_{job_id}.log"
    written.unlink()
    page = herd.page(f"/jobs/{job_id}")
    said = f"job {job_id}: its log file is gone: {written}"
    for stream in ("stdout", "stderr"):
        assert _note(page, stream) == said == _log_refused(herd, job_id, stream), stream
        assert not _has_download(page, stream), stream
    assert 'data-empty=""' in page and 'data-empty="(empty)"' not in page


def test_each_log_says_its_own(board: Board) -> None:
    """The job's own stdout.log deleted: its box says so; stderr's is shown as before."""
    herd = board.herd
    job_id = herd.submit("--gpus", "0", "--", "echo out; echo err-here >&2")
    folder = Path(herd.wait_state(job_id, "succeeded")["job_dir"]) / "attempt-1"
    (folder / "stdout.log").unlink()
    page = herd.page(f"/jobs/{job_id}")
    said = f"job {job_id}: its log file is gone: {folder / 'stdout.log'}"
    assert _note(page, "stdout") == said == _log_refused(herd, job_id, "stdout")
    assert not _has_download(page, "stdout")
    assert _note(page, "stderr") is None and _has_download(page, "stderr")
    assert re.search(r'<pre id="log-stderr"[^>]*>err-here\n</pre>', page)


def test_a_log_that_is_no_plain_file_says_why_it_is_not_served(board: Board) -> None:
    """A folder in stdout.log's place showed `(empty)`; the download answered 403."""
    herd = board.herd
    job_id = herd.submit("--gpus", "0", "--", "echo out")
    log = Path(herd.wait_state(job_id, "succeeded")["job_dir"]) / "attempt-1" / "stdout.log"
    log.unlink()
    log.mkdir()
    page = herd.page(f"/jobs/{job_id}")
    said = f"{log} is not a plain file: not served"
    assert _note(page, "stdout") == said == _log_refused(herd, job_id, "stdout")
    assert not _has_download(page, "stdout") and _note(page, "stderr") is None
    shutil.rmtree(log)


def test_a_running_jobs_log_not_there_is_still_to_come(board: Board) -> None:
    """Not there while its attempt runs: it may yet come (`nothing yet`); once it ended: gone."""
    herd = board.herd
    job_id = herd.submit("--gpus", "0", "--", "sleep 600")
    log = Path(herd.wait_state(job_id, "running")["job_dir"]) / "attempt-1" / "stdout.log"
    log.unlink()
    page = herd.page(f"/jobs/{job_id}")
    assert _note(page, "stdout") is None and _has_download(page, "stdout")
    assert re.search(r'<pre id="log-stdout" class="log" data-empty="nothing yet"', page)
    herd.cli("kill", str(job_id))
    herd.wait_state(job_id, "killed")
    page = herd.page(f"/jobs/{job_id}")
    assert _note(page, "stdout") == f"job {job_id}: its log file is gone: {log}"
    assert _note(page, "stderr") is None  # (there, empty: `(empty)`, as before)


@pytest.mark.parametrize("asked", ["-1", "-20"])
def test_a_negative_attempt_reads_as_attempt_0_does(board: Board, asked: str) -> None:
    herd = board.herd
    job_id = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(job_id, "succeeded")
    page = herd.page(f"/jobs/{job_id}?attempt={asked}")
    said = f"job {job_id} has no attempt {asked}: it has attempt 1, showing attempt 1"
    assert f'<p class="warn" id="no-such-attempt">{said}</p>' in page
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    page = herd.page(f"/jobs/{held}?attempt={asked}")
    said = f"job {held} has no attempt {asked}: it has not started yet"
    assert f'<p class="warn" id="no-such-attempt">{said}</p>' in page


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("99999999999999999999999", "99,999,999,999,999,999,999,999"),
        ("1000001", "1,000,001"),
        (str(2**63 + 5), f"{2**63 + 5:,}"),  # past SQLite's largest offset too
    ],
)
def test_a_page_past_the_last_is_named_as_asked(board: Board, typed: str, shown: str) -> None:
    """A page past 1,000,000 was said as page 1,000,000."""
    herd = board.herd
    herd.wait_state(herd.submit("--gpus", "0", "--", "true"), "succeeded")
    page = herd.page(f"/jobs?page={typed}")
    found = re.search(r"(\d[\d,]*) jobs?, none on page ([\d,]+):\s*<a [^>]*>the last is page", page)
    assert found is not None, page
    assert found.group(2) == shown
    assert 'id="page-error"' not in page  # a page number: said by the pager alone, as before


def test_a_long_page_number_stays_in_the_window_at_390_px(board: Board, expect: Any) -> None:
    """Unbroken, `99,999,999,999,999,999,999,999` ran out past the window's left edge."""
    herd = board.herd
    herd.wait_state(herd.submit("--gpus", "0", "--", "true"), "succeeded")
    page = board.page("/jobs?page=" + "9" * 40)
    page.set_viewport_size({"width": 390, "height": 800})
    said = page.locator("nav.pager > span").first
    expect(said).to_contain_text("none on page 9,999,999,")
    inside = said.evaluate(
        """s => {
            const box = s.getBoundingClientRect(), nav = s.parentElement.getBoundingClientRect();
            return [box.left >= nav.left, box.right <= nav.right];
        }"""
    )
    assert inside == [True, True]
    page.close()


def test_a_sweeps_values_stay_whole_at_390_px(board: Board, expect: Any, tmp_path: Path) -> None:
    """At 390 px `1e-4` broke into `1e-` and `4`, and `adamw-fused` at its hyphen too."""
    metrics = '{{"val_loss": 1.5e-05, "train_loss": -0.000123, "accuracy": 0.91234}}'
    command = f"printf '%s' '{metrics}' > {{run_dir}}/metrics.json"
    params = ["-p", "lr", "1e-4", "1e-3", "1e-2", "-p", "weight_decay", "1e-5", "1e-6"]
    args = ["sweep", command, *params, "-p", "optimizer", "adamw-fused", "--gpus", "0"]
    ids = board.herd.cli(*args, "--name", "lr-narrow", "-q", cwd=tmp_path).stdout.split()
    for job_id in ids:
        board.herd.wait_state(int(job_id), "succeeded")
    page = board.page("/sweeps/lr-narrow")
    page.set_viewport_size({"width": 390, "height": 800})
    cells = page.locator("table.sweep-table td.param, table.sweep-table td.metric")
    expect(cells).to_have_count(6 * 6)
    lines = cells.evaluate_all(
        """cells => cells.map(cell => {
            const text = document.createRange();
            text.selectNodeContents(cell);
            return [cell.textContent, text.getClientRects().length];
        })"""
    )
    assert {text for text, _ in lines} >= {"1e-4", "adamw-fused", "1.5e-05", "-0.000123"}
    assert [cell for cell in lines if cell[1] != 1] == []
    box = page.locator(".table-scroll")  # (wider than the window: it scrolls in its box)
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    page.close()
