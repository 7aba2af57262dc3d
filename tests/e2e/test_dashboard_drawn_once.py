"""A page is drawn once: its event stream asks for no second render of what the page already
shows (every stream said `change` on connect, so each page was built twice, ~0.2 s apart: a
sweep of 1,500 points too), and a change made between the page's render and its stream's
connection still shows (the page gives its stream the mark it was drawn at).

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
