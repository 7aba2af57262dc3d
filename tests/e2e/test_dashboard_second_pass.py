"""The dashboard saying what it did with an address it could not follow, and a job's page
saying only what applies: `/jobs?sweep=nope` said "No job matches this filter" (as if the
sweep were there, empty), `?page=abc` and `?attempt=x` were shown as page 1 and the latest
attempt without a word; the forms' refusals quoted a box's label in some lines and not in
others; `1.0 GiB` broke between number and unit on a phone; a job not started showed a row
of dashes (exit status, run time, pid, started, ended)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board
from test_dashboard_pages import post

from conftest import wait_for
from gpuherd.api.form_fields import read_field
from gpuherd.api.form_words import EDIT_LABELS, SUBMIT_LABELS

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("second") / "home", "2") as b:
        yield b


def said(page: str, element: str) -> list[str]:
    """The text of the elements of id `element` (tags dropped, as a reader sees it)."""
    found = re.findall(rf'id="{element}">(.*?)</(?:div|p|dd)>', page, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for text in found]


def facts(page: str) -> dict[str, str]:
    """A job page's facts, term -> text."""
    pairs = re.findall(r"<dt>([^<]*)</dt><dd[^>]*>(.*?)</dd>", page, re.S)
    return {term: html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for term, text in pairs}


def test_a_sweep_filter_of_no_sweep_says_so_and_names_the_sweeps(
    board: Board, tmp_path: Path
) -> None:
    herd = board.herd
    page = herd.page("/jobs?sweep=nope")
    assert said(page, "sweep-error") == ["no sweep 'nope': there are no sweeps yet (all sweeps)"]
    assert '<a href="/sweeps">all sweeps</a>' in page
    options = ("-p", "a", "1", "--gpus", "0", "--hold")
    for name in ("lr-grid", "seeds"):
        herd.cli("sweep", "echo {a}", *options, "--name", name, cwd=tmp_path)
    page = herd.page("/jobs?sweep=nope")
    [line] = said(page, "sweep-error")
    assert line in (  # (in the order `sweep ls` lists them)
        "no sweep 'nope': the sweeps are seeds, lr-grid (all sweeps)",
        "no sweep 'nope': the sweeps are lr-grid, seeds (all sweeps)",
    )
    # A sweep there is, with no job of the filter: nothing to say but the table's words.
    page = herd.page("/jobs?sweep=lr-grid&state=running")
    assert said(page, "sweep-error") == [] and "No job matches this filter." in page
    assert said(herd.page("/jobs?sweep=lr-grid"), "sweep-error") == []


def test_a_page_or_attempt_that_is_no_number_is_said(board: Board) -> None:
    herd = board.herd
    for typed in ("abc", "0", "-2", "1.5"):
        page = herd.page(f"/jobs?page={typed}")
        assert said(page, "page-error") == [
            f"page '{typed}' is no page number: use 1 or more; showing page 1"
        ], typed
    for fine in ("1", "", "2"):  # (page 2 of a short list: said by the pager, as before)
        assert said(herd.page(f"/jobs?page={fine}"), "page-error") == []
    ran = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(ran, "succeeded")
    page = herd.page(f"/jobs/{ran}?attempt=x")
    assert said(page, "no-such-attempt") == [
        f"job {ran} has no attempt 'x': it has attempt 1, showing attempt 1"
    ]
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    page = herd.page(f"/jobs/{held}?attempt=first")
    assert said(page, "no-such-attempt") == [
        f"job {held} has no attempt 'first': it has not started yet"
    ]
    # Its own links (`?attempt=1`, the head's `?attempt=0` before a start) say nothing.
    assert said(herd.page(f"/jobs/{ran}?attempt=1"), "no-such-attempt") == []
    assert said(herd.page(f"/jobs/{held}?attempt=0"), "no-such-attempt") == []
    assert said(herd.page(f"/jobs/{ran}?attempt="), "no-such-attempt") == []


def test_the_forms_quote_every_label_alike(board: Board, tmp_path: Path) -> None:
    """`'retries' must be 0 or more` (the daemon's line) and `memory per GPU: ...` (the
    form's reader) were two styles on one form."""
    herd = board.herd
    fields = {"commands": "true", "cwd": str(tmp_path), "gpus": "0"}  # (each refused)
    lines = []
    for name, text in (("retries", "-1"), ("mem", "lots"), ("priority", "x"), ("begin", "x")):
        answer = post(herd, "/submit", htmx=False, **{**fields, name: text})
        assert answer.status in (400, 422), answer.body
        [line] = said(answer.body, "submit-error")
        lines.append(line)
    assert lines[0].startswith("'retries' must be 0 or more")
    assert lines[1].startswith("'memory per GPU': invalid size 'lots'")
    assert lines[2] == "'priority': 'x' is not a whole number"
    assert lines[3].startswith("'begin': invalid time 'x': use now, +DURATION")
    env = post(herd, "/submit", htmx=False, env="NOEQUALS", **fields)
    assert said(env.body, "submit-error") == [
        "'environment changes': line 'NOEQUALS': use NAME=VALUE"
    ]
    away = post(herd, "/submit", htmx=False, **{**fields, "cwd": "relative/x"})
    assert said(away.body, "submit-error")[0].startswith(
        "'working directory': 'relative/x' is not a folder here"
    )
    # The edit form's reader, by its labels: quoted as the submit form's.
    for labels in (EDIT_LABELS, SUBMIT_LABELS):
        with pytest.raises(Exception, match=r"^'retry delay': invalid duration 'soon'"):
            read_field("retry_delay", "soon", labels)
        with pytest.raises(Exception, match=r"^'GPUs': cannot be emptied"):
            read_field("gpus", "", labels)


def test_a_job_not_started_shows_what_applies(board: Board) -> None:
    herd = board.herd
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    waiting = herd.submit("--after", str(held), "--gpus", "0", "--", "true")
    shown = facts(herd.page(f"/jobs/{held}"))
    assert shown["Started"] == "not started yet: held"
    for term in ("Exit status", "Run time", "PID", "Ended"):
        assert term not in shown, (term, shown)
    reason = herd.job(waiting)["reason"]
    assert reason.startswith(f"waiting for job {held}")  # as `gpuherd ls` says it
    assert facts(herd.page(f"/jobs/{waiting}"))["Started"] == f"not started yet: {reason}"
    # Cancelled before it started: its outcome and end, never a start.
    herd.cli("kill", str(held))  # (held: cancelled)
    herd.wait_state(waiting, "cancelled")
    shown = facts(herd.page(f"/jobs/{waiting}"))
    assert shown["Started"] == "never started" and shown["Exit status"] == "dependency_failed"
    assert shown["Ended"] and "PID" not in shown and "Run time" not in shown
    # Waiting to start again: its next attempt, why it waits; the last one's in the table.
    again = herd.submit("--gpus", "0", "--retries", "1", "--retry-delay", "1h", "--", "exit 3")
    wait_for(lambda: herd.job(again)["attempts"] and herd.job(again)["state"] == "queued")
    reason = herd.job(again)["reason"]
    shown = facts(herd.page(f"/jobs/{again}"))
    assert shown["Started"] == f"attempt 2 not started yet: {reason}", shown
    for term in ("Exit status", "Run time", "PID", "Ended"):
        assert term not in shown, (term, shown)
    herd.cli("kill", str(again))
    # One that ran keeps its facts.
    ran = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(ran, "succeeded")
    shown = facts(herd.page(f"/jobs/{ran}"))
    assert {"Exit status", "Run time", "PID", "Started", "Ended"} <= shown.keys()
    assert shown["Started"] != "-" and shown["PID"] != "-"


def test_at_390_px_a_size_stays_whole(board: Board, expect: Any) -> None:
    """`1.0 GiB` broke between number and unit in the "asked for" line on a phone."""
    herd = board.herd
    asks = ("--gpus", "2", "--only-gpus", "0,1", "--mem", "1GiB", "--exclusive", "--ram", "4GiB")
    job = herd.submit("--hold", *asks, "--", "true")
    # The CLI's words keep plain spaces: only the page's markup keeps sizes whole.
    line = next(x for x in herd.cli("show", str(job)).stdout.splitlines() if "requested" in x)
    assert "1.0 GiB each" in line and "\xa0" not in line
    page = board.page(f"/jobs/{job}")
    page.set_viewport_size({"width": 390, "height": 800})
    asked = page.locator("#job-requested")
    expect(asked).to_contain_text("1.0 GiB each")
    # Each size's lines on the page: one each, however the line around it wraps.
    lines = asked.evaluate(
        """box => {
            const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
            const found = [];
            for (let text = walker.nextNode(); text; text = walker.nextNode()) {
                for (const m of text.data.matchAll(/\\d+\\.\\d (GiB|MiB)/g)) {
                    const range = document.createRange();
                    range.setStart(text, m.index);
                    range.setEnd(text, m.index + m[0].length);
                    const tops = [...range.getClientRects()].map(r => Math.round(r.top));
                    found.push([m[0], new Set(tops).size]);
                }
            }
            return {sizes: found, lines: box.getClientRects().length};
        }"""
    )
    assert lines["sizes"] == [["1.0 GiB", 1], ["4.0 GiB", 1]], lines
    assert lines["lines"] > 1  # (the line wraps at 390 px: between words only)
    # What a copy of it gives: plain spaces, as `show` says it.
    assert "\xa0" not in asked.inner_text()
    page.close()
