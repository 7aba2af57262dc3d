"""A job page's edit form changes what `gpuherd edit` changes: also the folder a job runs in,
its grace, the jobs it waits for and when it may begin (each cleared by emptying its box),
through the same checks. In Debian's chromium, as test_dashboard.py.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, board, browser, expect

__all__ = ["board", "browser", "expect"]  # the fixtures, shared with test_dashboard.py

FORM = "details.edit-job"


def save(page: Any, **fields: str) -> None:
    """Type `fields` into the open edit form, then save it."""
    for name, text in fields.items():
        page.fill(f"{FORM} [name={name}]", text)
    page.click("#edit-button")


def test_where_it_runs_what_it_waits_for_and_when_it_begins(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    first, other = (board.submit("--hold", "--gpus", "0", "--", "true") for _ in range(2))
    job_id = board.submit("--gpus", "0", "--after", str(first), "--", "pwd")
    page = board.page(f"/jobs/{job_id}")
    page.locator(f"{FORM} summary").click()
    form = page.locator(FORM)
    expect(form.locator("[name=after]")).to_have_value(str(first))
    expect(form.locator("[name=grace]")).to_have_value("10.0s")
    expect(form.locator("[name=begin]")).to_have_value("")
    was_cwd = board.herd.job(job_id)["cwd"]
    expect(form.locator("[name=cwd]")).to_have_value(was_cwd)

    save(page, cwd=str(tmp_path), grace="30s", after="", after_any=f"#{other}", begin="+2h")
    said = page.locator("#flash .flash.ok")
    expect(said).to_contain_text(
        f"job {job_id}: edited ('working directory' {was_cwd} -> {tmp_path}, 'grace' 10s ->"
        f" 30s, 'after' {first} -> none, 'after any end of' none -> {other}, 'begin' none -> "
    )
    job = board.herd.job(job_id)
    assert (job["cwd"], job["grace"], job["after"], job["after_any"]) == (
        str(tmp_path),
        30.0,
        [],
        [other],
    )
    assert job["state"] == "held" and job["begin"] == pytest.approx(time.time() + 7200, abs=60)
    expect(page.locator("#job-state")).to_have_text("held")  # the page drew it again
    expect(page.locator("dt:text-is('After any end of') + dd")).to_have_text(f"#{other}")

    # Saved, a box shows the job's new value, not what was typed: "+2h" again with the next
    # save would move the job's time.
    begins = datetime.fromtimestamp(job["begin"]).strftime("%Y-%m-%d %H:%M:%S")
    expect(form.locator("[name=begin]")).to_have_value(begins)
    expect(form.locator("[name=grace]")).to_have_value("30.0s")
    save(page, name="renamed")
    expect(said).to_contain_text(f"job {job_id}: edited ('name' none -> renamed)")
    assert board.herd.job(job_id)["begin"] == job["begin"]

    save(page, begin="")
    expect(said).to_contain_text(f"job {job_id}: edited ('begin' ")
    expect(said).to_contain_text("-> none, released")
    assert board.herd.job(job_id)["state"] == "queued"  # (it waits for `other`)
    page.close()


@pytest.mark.parametrize(
    ("name", "text", "refusal"),
    [
        ("cwd", "/no/such/folder", "working directory /no/such/folder does not exist"),
        ("cwd", "", "'working directory': a job runs in a folder: give the absolute path of one"),
        ("grace", "soon", "'grace': invalid duration 'soon'"),
        # Emptied, a field every job has: said so, not `'grace': invalid duration ''`.
        ("grace", "", "'grace': cannot be emptied: type the time a stop waits before SIGKILL"),
        ("gpus", "", "'GPUs': cannot be emptied: type 0 for a job without GPUs"),
        ("command", "", "'command': a job runs a command: type one"),
        ("after", "abc", "'after': invalid job id 'abc'"),
        ("after", "99999999999999999999", "'after': 99999999999999999999 is too large (at most 2"),
        ("after_any", "SELF", "cannot wait for itself: name other jobs"),
        ("begin", "tomorrow", "'begin': invalid time 'tomorrow': use now, +DURATION"),
    ],
)
def test_a_wrong_field_is_refused_as_the_cli_refuses_it(
    board: Board, expect: Any, name: str, text: str, refusal: str
) -> None:
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    before = board.herd.job(job_id)
    page = board.page(f"/jobs/{job_id}")
    page.locator(f"{FORM} summary").click()
    text = text.replace("SELF", str(job_id))
    save(page, **{name: text})
    expect(page.locator("#flash .flash.error")).to_contain_text(refusal)
    expect(page.locator(FORM)).to_have_attribute("open", "")  # to correct it
    expect(page.locator(f"{FORM} [name={name}]")).to_have_value(text)
    assert board.herd.job(job_id) == before
    page.close()
