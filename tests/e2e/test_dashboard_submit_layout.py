"""The submit form's "More options" in Debian's chromium, as test_dashboard.py: closed at
first, open by itself when the form comes back with an error in one of its boxes, the form
inside a 1280-px window (and a phone's) with it open, and a dependency that already failed
said on the jobs page the form leads to. test_dashboard_submit_more.py checks the fields'
values and words over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_dashboard import Board, board, browser, expect

__all__ = ["board", "browser", "expect"]  # the fixtures, shared with test_dashboard.py

MORE = "details.more-options"

FITS = """form => {
  const box = form.getBoundingClientRect();
  const inputs = [...form.querySelectorAll('input, textarea')].filter(i => i.offsetParent);
  const out = inputs.filter(i => {
    const r = i.getBoundingClientRect();
    return r.left < box.left || r.right > box.right;
  }).map(i => i.name);
  const page = document.documentElement;
  return {out, sideways: page.scrollWidth > page.clientWidth, shown: inputs.length};
}"""


def test_more_options_open_on_an_error_in_them_and_fit_the_window(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    failed = board.submit("--gpus", "0", "--", "false")
    page = board.page("/submit")  # 1280 px wide
    more = page.locator(MORE)
    expect(more).not_to_have_attribute("open", "")
    expect(page.locator("input[name=timeout]")).to_be_hidden()

    more.locator("summary").click()
    page.fill("textarea[name=commands]", "true\ntrue")
    page.fill("input[name=gpus]", "0")
    page.fill("input[name=cwd]", str(tmp_path))
    page.fill("input[name=timeout]", "forever")
    page.fill("input[name=after]", f"#{failed}")
    page.click("#submit-button")
    expect(page.locator("#submit-error")).to_contain_text("'timeout': invalid duration 'forever'")
    expect(more).to_have_attribute("open", "")  # by itself: the page was drawn again
    expect(page.locator("input[name=timeout]")).to_be_visible()
    expect(page.locator("input[name=timeout]")).to_have_value("forever")
    expect(page.locator("input[name=after]")).to_have_value(f"#{failed}")
    laid = page.locator("form.submit").evaluate(FITS)
    assert laid["out"] == [] and not laid["sideways"] and laid["shown"] >= 20, laid
    page.set_viewport_size({"width": 390, "height": 844})
    laid = page.locator("form.submit").evaluate(FITS)
    assert laid["out"] == [] and not laid["sideways"], laid
    page.set_viewport_size({"width": 1280, "height": 800})

    board.herd.wait_state(failed, "failed")
    page.fill("input[name=timeout]", "1h")
    page.click("#submit-button")
    warning = page.locator(".flash.cancelled-warning")
    expect(warning).to_contain_text("are cancelled at once: job")
    first, last = (int(i) for i in page.url.split("submitted=")[1].split("&")[0].split("-"))
    expect(warning).to_have_text(
        f"warning: jobs {first}-{last} are cancelled at once: job {failed}, which they wait for, "
        f"already failed (gpuherd retry {failed} {first}-{last} runs them all again)"
    )
    for job_id in (first, last):
        job = board.herd.job(job_id)
        assert (job["state"], job["timeout"], job["after"]) == ("cancelled", 3600.0, [failed])
    page.close()
