"""What a live refresh of a page keeps (what was typed in a job's edit form, "select all"),
and what it shows (a priority set from a shell, why a job waits once that changes); and a job
page's layout with a long name.

In Debian's chromium, as test_dashboard.py; the board (a daemon with 4 fake GPUs) is this
module's own.
"""

from __future__ import annotations

from typing import Any

from test_dashboard import Board, board, browser, expect

__all__ = ["board", "browser", "expect"]  # the fixtures, shared with test_dashboard.py

SWAPPED = "() => document.querySelector('#job-head form') !== window.before"


def refresh_head(page: Any) -> None:
    """Refresh the job page's head as a change of the job does, and wait until it is new."""
    page.evaluate("() => { window.before = document.querySelector('#job-head form'); }")
    page.evaluate("() => htmx.trigger(document.body, 'refresh')")
    page.wait_for_function(SWAPPED)


def test_what_is_typed_in_the_edit_form_outlives_a_refresh_and_a_refusal(
    board: Board, expect: Any
) -> None:
    job_id = board.submit("--hold", "--gpus", "0", "--name", "before", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    page.locator("details.edit-job summary").click()
    page.fill("details.edit-job input[name=name]", "typed")
    page.fill("details.edit-job input[name=timeout]", "banana")
    page.focus("details.edit-job input[name=timeout]")
    refresh_head(page)  # the job changed meanwhile (from a shell, say)
    form = page.locator("details.edit-job")
    expect(form).to_have_attribute("open", "")
    expect(form.locator("input[name=name]")).to_have_value("typed")
    expect(form.locator("input[name=timeout]")).to_have_value("banana")
    expect(form.locator("input[name=timeout]")).to_be_focused()  # typing goes on there

    page.click("#edit-button")
    expect(page.locator("#flash .flash.error")).to_contain_text("'timeout': invalid duration")
    expect(form).to_have_attribute("open", "")  # refused: nothing changed, nothing wiped
    expect(form.locator("input[name=name]")).to_have_value("typed")
    form.locator("input[name=timeout]").fill("2h")
    page.click("#edit-button")
    expect(page.locator("#flash .flash.ok")).to_contain_text(f"job {job_id}: edited")
    job = board.herd.job(job_id)
    assert (job["name"], job["timeout"]) == ("typed", 7200.0)
    page.close()


def test_a_priority_set_from_a_shell_shows_on_the_open_page(board: Board, expect: Any) -> None:
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    priority = page.locator("dt:text-is('Priority') + dd")
    expect(priority).to_have_text("0")
    board.herd.cli("priority", str(job_id), "7")
    expect(priority).to_have_text("7")  # the change was published: no reload needed
    # Two answers, the second to a replaced button; the first answer's message, over the
    # page, moves no button from under the pointer.
    page.dblclick("#job-head .act-prio-up")
    expect(priority).to_have_text("9")
    message = page.locator("#flash .flash.ok")
    expect(message).to_contain_text(f"job {job_id}: priority 9")
    message.click()  # put away
    expect(message).to_have_count(0)
    page.close()


def test_a_button_clicked_just_after_a_refresh_is_sent_by_htmx(board: Board, expect: Any) -> None:
    # htmx made a swapped-in fragment's forms its own only after its settle delay (20 ms by
    # default): a click on a job's head in those 20 ms after a refresh went out as a plain
    # form post, and the page reloaded, its message lost. The click here comes at once.
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    page.evaluate(
        """() => {
        window.notReloaded = true;
        document.addEventListener("htmx:afterSwap", function once(event) {
          if (event.detail.target.id !== "job-head") { return; }
          document.removeEventListener("htmx:afterSwap", once);
          // the first moment a user's click could come: a task after the swap's
          setTimeout(function () { document.querySelector("#job-head .act-prio-up").click(); });
        });
        }"""
    )
    refresh_head(page)
    expect(page.locator("#flash .flash.ok")).to_contain_text(f"job {job_id}: priority 1")
    assert page.evaluate("() => window.notReloaded") is True
    page.close()


def test_why_a_job_waits_follows_the_queue(board: Board, expect: Any) -> None:
    board.herd.cli("pause")
    try:
        job_id = board.submit("--gpus", "0", "--", "true")
        page = board.page(f"/jobs/{job_id}")
        expect(page.locator(".reason-line")).to_have_text("Waiting: queue paused")
        board.herd.cli("resume")  # no change of this job: of the queue
        expect(page.locator("#job-state")).to_have_text("succeeded")
    finally:
        board.herd.cli("resume")
    first, second = (board.submit("--hold", "--gpus", "0", "--", "true") for _ in range(2))
    waiter = board.submit("--after", f"{first},{second}", "--gpus", "0", "--", "true")
    page = board.page(f"/jobs/{waiter}")
    reason = page.locator(".reason-line")
    held = f"{first}-{second}"
    expect(reason).to_have_text(f"Waiting for jobs {held} (held: gpuherd release {held})")
    board.herd.cli("release", str(first))  # other jobs' changes: this one's reason follows
    board.herd.wait_state(first, "succeeded")
    expect(reason).to_have_text(f"Waiting for job {second} (held: gpuherd release {second})")
    assert board.herd.job(waiter)["state"] == "queued"  # no change of its own told the page
    page.close()


def test_select_all_stays_ticked_through_a_refresh(board: Board, expect: Any) -> None:
    first = board.submit("--hold", "--gpus", "0", "--project", "ticks", "--", "true")
    page = board.page("/jobs?project=ticks")
    page.evaluate(
        """() => { window.swaps = 0; document.addEventListener("htmx:afterSwap",
        (e) => { if (e.detail.target.id === "jobs-live") window.swaps++; }); }"""
    )
    page.locator(".select-all").check()
    other = board.submit("--hold", "--gpus", "0", "--project", "ticks", "--", "true")
    expect(page.locator(f"#job-{other}")).to_be_visible()  # the table was fetched again
    expect(page.locator(f"#job-{first} input.pick")).to_be_checked()
    expect(page.locator(".select-all")).not_to_be_checked()  # a new row is not ticked
    page.locator(".select-all").check()
    swaps = page.evaluate("() => window.swaps")
    board.submit("--hold", "--gpus", "0", "--project", "elsewhere", "--", "true")
    page.wait_for_function(f"() => window.swaps > {swaps}")  # fetched again, rows the same
    expect(page.locator(".select-all")).to_be_checked()
    page.locator(".select-all").uncheck()  # one click unticks them all
    expect(page.locator("input.pick:checked")).to_have_count(0)
    page.close()


def test_a_long_name_wraps_instead_of_widening_the_page(board: Board) -> None:
    job_id = board.submit("--hold", "--gpus", "0", "--name", "x" * 3000, "--", "true")
    page = board.page(f"/jobs/{job_id}")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 1280, width  # the viewport's width
    page.close()


def test_why_a_job_waits_follows_the_gpus_and_the_settings(board: Board, expect: Any) -> None:
    busy = board.submit("--only-gpus", "3", "--", "sleep 60")
    other = board.submit("--only-gpus", "0", "--project", "slow", "--", "sleep 60")
    board.herd.wait_state(busy, "running")
    board.herd.wait_state(other, "running")
    waiter = board.submit("--only-gpus", "3", "--project", "slow", "--", "true")
    page = board.page(f"/jobs/{waiter}")
    reason = page.locator(".reason-line")
    expect(reason).to_have_text("Waiting for a free GPU of --only-gpus 3")
    try:
        board.herd.cli("gpus", "drain", "3")  # no job changed: the GPUs did
        expect(reason).to_have_text(
            "Waiting for a free GPU of --only-gpus 3 (GPU 3 is draining: nothing new starts "
            "there until `gpuherd gpus enable 3`)"
        )
        board.herd.cli("gpus", "enable", "3")
        board.herd.cli("config", "set", "project-limits", "slow=1")  # and now the settings
        expect(reason).to_have_text(
            "Waiting for a run slot of project slow (1 running: config project-limits)"
        )
    finally:
        board.herd.cli("gpus", "enable", "3")
        board.herd.cli("config", "set", "project-limits", "none")
        board.herd.cli("kill", str(busy), str(other), str(waiter), check=False)
    page.close()
