"""A page is drawn once: its event stream asks for no second render of what the page already
shows (every stream said `change` on connect, so each page was built twice, ~0.2 s apart: a
sweep of 1,500 points too), and a change made between the page's render and its stream's
connection still shows (the page gives its stream the mark it was drawn at); a job's page
whose stream opens again fetches its head only for a change since the head was last drawn.

In Debian's chromium, as test_dashboard.py. The board is this module's own and every test
leaves it quiet (no job that will change), so each fetch counted is one a change asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_dashboard import Board, board, browser, expect
from test_dashboard_qa_usability import HIDE, SHOW

__all__ = ["board", "browser", "expect"]  # the fixtures, shared with test_dashboard.py

STREAM_OPEN = """
window.streamOpen = false;
document.addEventListener("htmx:sseOpen", () => { window.streamOpen = true; });
"""


@dataclass
class Case:
    """A page showing a held job, and what shows that job's cancel there."""

    path: str
    fragment: str
    """The path of the fragment the page fetches again when its stream says so."""
    stream: str
    job: int
    shows: str
    text: str = "cancelled"
    fetched: list[str] = field(default_factory=list)

    def listen(self, page: Any) -> None:
        """Count the page's fetches of its fragment; know when its stream is open."""
        page.add_init_script(STREAM_OPEN)
        page.on("request", self._request)

    def _request(self, request: Any) -> None:
        if urlsplit(request.url).path == self.fragment:
            self.fetched.append(request.url)

    def cancel(self, board: Board) -> None:
        board.herd.cli("kill", str(self.job))


def _held(board: Board) -> int:
    return board.submit("--hold", "--gpus", "0", "--", "true")


def _held_sweep(board: Board, folder: Path, name: str) -> int:
    """A sweep of two held points; the job of its first."""
    board.herd.cli("sweep", "true {x}", "-p", "x", "1", "2", "--hold", "--name", name, cwd=folder)
    return int(board.herd.cli("ls", "-q", "--sweep", name).stdout.split()[0])


def _jobs_list(board: Board, folder: Path) -> Case:
    job = _held(board)
    return Case("/jobs", "/ui/jobs", "/ui/events", job, f"#job-{job} .pill")


def _job_page(board: Board, folder: Path) -> Case:
    job = _held(board)
    return Case(f"/jobs/{job}", f"/ui/jobs/{job}", f"/ui/jobs/{job}/stream", job, "#job-state")


def _sweep_page(board: Board, folder: Path) -> Case:
    name = f"one-{folder.name}"
    job = _held_sweep(board, folder, name)
    row = f'tr.point:has(a[href="/jobs/{job}"]) .pill'
    return Case(f"/sweeps/{name}", f"/ui/sweeps/{name}", f"/ui/sweep-events/{name}", job, row)


def _sweeps_page(board: Board, folder: Path) -> Case:
    name = f"listed-{folder.name}"
    job = _held_sweep(board, folder, name)
    failed = f'[data-sweep="{name}"] .count-failed .n'  # a cancelled point counts as failed
    return Case("/sweeps", "/ui/sweeps", "/ui/sweep-events", job, failed, "1")


PAGES = [_jobs_list, _job_page, _sweep_page, _sweeps_page]
NAMES = ["jobs", "job", "sweep", "sweeps"]


@pytest.mark.parametrize("make", PAGES, ids=NAMES)
def test_a_page_is_fetched_again_only_for_a_change(
    board: Board, expect: Any, tmp_path: Path, make: Callable[[Board, Path], Case]
) -> None:
    case = make(board, tmp_path)
    page = board.page(case.path, before=case.listen)
    page.wait_for_function("() => window.streamOpen")  # connected: nothing changed since
    case.cancel(board)  # a change, whose fetch comes after any the connection asked for
    expect(page.locator(case.shows)).to_have_text(case.text)
    assert len(case.fetched) == 1, case.fetched  # the change's, not one more on connect
    page.close()


@pytest.mark.parametrize("make", PAGES, ids=NAMES)
def test_a_change_between_the_render_and_the_stream_shows(
    board: Board, expect: Any, tmp_path: Path, make: Callable[[Board, Path], Case]
) -> None:
    case = make(board, tmp_path)

    def change_then_connect(route: Any) -> None:
        case.cancel(board)  # the page is drawn (held), its stream not yet connected
        route.continue_()

    def before(page: Any) -> None:
        case.listen(page)
        page.route(lambda url: urlsplit(url).path == case.stream, change_then_connect, times=1)

    page = board.page(case.path, before=before)
    expect(page.locator(case.shows)).to_have_text(case.text)
    assert len(case.fetched) == 1, case.fetched
    page.close()


SOURCES = """
window.sources = [];
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(url, options) { super(url, options); window.sources.push(this); }
};
"""
"""Keeps the page's EventSources (`sources`), to see its stream close and open again."""


def test_a_job_page_reconnected_fetches_its_head_only_for_a_change(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """A job's page whose stream opens again (its tab hidden, then shown) goes on from its
    logs' offsets and from the mark its head was last drawn at: the head is fetched again
    only for a change since. (dashboard.js rewrote the stream's URL to `?resume=…&live=1`
    on the first log line, dropping the mark: every reconnect said `state` at once.)"""
    go = [tmp_path / f"go-{n}" for n in range(3)]
    wait = [f"until [ -e {flag} ]; do sleep 0.05; done" for flag in go]
    job = board.submit("--gpus", "0", "--", f"{wait[0]}; echo one; {wait[1]}; echo two; {wait[2]}")
    board.herd.wait_state(job, "running")
    case = Case(f"/jobs/{job}", f"/ui/jobs/{job}", f"/ui/jobs/{job}/stream", job, "#job-state")

    def before(page: Any) -> None:
        case.listen(page)
        page.add_init_script(SOURCES)

    page = board.page(case.path, before=before)
    page.wait_for_function("() => sources.length === 1 && sources[0].readyState === 1")
    board.herd.cli("pause", str(job))  # the head is drawn again, with a later mark
    expect(page.locator(case.shows)).to_have_text("paused")
    board.herd.cli("resume", str(job))
    expect(page.locator(case.shows)).to_have_text("running")
    go[0].touch()
    log = page.locator("#log-stdout")
    expect(log).to_have_text("one\n")  # the stream's URL is rewritten to resume after it
    fetched = len(case.fetched)

    page.evaluate(HIDE)  # as a tab behind another: its stream is closed after 3 s
    page.wait_for_function("() => sources[0].readyState === 2", timeout=10_000)
    page.evaluate(SHOW)
    page.wait_for_function("() => sources.length === 2 && sources[1].readyState === 1")
    go[1].touch()  # its line comes after any `state` said on connecting
    expect(log).to_have_text("one\ntwo\n")  # from the offsets: nothing twice
    assert len(case.fetched) == fetched, case.fetched[fetched:]  # before: one more
    again = urlsplit(page.evaluate("() => sources[1].url")).query
    assert "since=" in again and "resume=" in again, again

    go[2].touch()  # the board is left quiet
    expect(page.locator(case.shows)).to_have_text("succeeded")
    page.close()
