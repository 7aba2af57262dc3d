"""What a review of the dashboard in a browser found next: on a sweep's jobs page at 1280 px
the names cut at ~23 characters beside empty GPUs and Info columns; placeholders that read
as values (`none` in the max log size box: an empty box looked like one set to "none"); and
an edit's refusal said only in the corner, whose message the next one replaces and a click
puts away. One daemon (4 fake GPUs, TCP listener) and one browser serve the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

SWEEP = "lr-opt-grid"
TEMPLATE = "python3 -c 'import sys' --learning-rate {learning_rate} --optimizer {optimizer}"
WIDTHS = (700, 1024, 1200, 1280, 1920)

FITS = """box => [box.scrollWidth, box.clientWidth]"""
NAMES_SHOWN = """cells => cells.map(cell => {
  const box = cell.querySelector('.shown') || cell;  // (the name's box; before, the cell)
  return [cell.textContent, box.scrollWidth <= box.clientWidth];
})"""


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("hints") / "home", "4") as b:
        yield b


@pytest.fixture(scope="module")
def sweep(board: Board, tmp_path_factory: pytest.TempPathFactory) -> list[int]:
    """4 points, named `learning_rate=0.0003,optimizer=sgd_momentum` (43 characters) and so
    on, all succeeded: their GPUs and Info columns are empty."""
    values = ["-p", "learning_rate", "0.001", "0.0003", "-p", "optimizer", "adamw", "sgd_momentum"]
    args = ["sweep", TEMPLATE, *values, "--gpus", "0", "--name", SWEEP, "-q"]
    ids = [
        int(i) for i in board.herd.cli(*args, cwd=tmp_path_factory.mktemp("sweep")).stdout.split()
    ]
    for job_id in ids:
        board.herd.wait_state(job_id, "succeeded")
    return ids


@pytest.fixture(scope="module")
def crowded(board: Board) -> dict[str, int]:
    """A page of every kind of row, in project `crowd`: jobs running, one waiting for 4 free
    GPUs and one for a held job (reasons why they wait in the Info column), a held job of a
    name longer than the Name column keeps room for, `dependency_failed` ones, long commands."""
    herd, project = board.herd, ("--project", "crowd")
    command = "python3 -c 'import sys' --learning-rate 0.01 --optimizer sgd --a-long-flag-here"
    failed = herd.submit(*project, "--gpus", "0", "--name", "broken", "--", "false")
    herd.wait_state(failed, "failed")
    cancelled = [
        herd.submit(*project, "--gpus", "0", "--after", str(failed), "--", command) for _ in "ab"
    ]
    long_name = "resnet152-imagenet-cosine-warmup-lr=3e-4,wd=0.05,seed=11"
    held = herd.submit(*project, "--hold", "--gpus", "2", "--name", long_name, "--", command)
    running = [
        herd.submit(*project, "--gpus", "1", "--name", name, "--", "sleep 600")
        for name in ("shareA", "shareB")
    ]
    for job_id in running:
        herd.wait_state(job_id, "running")
    waiting = herd.submit(*project, "--gpus", "4", "--name", "need4", "--", command)
    after_held = herd.submit(*project, "--gpus", "0", "--after", str(held), "--", command)
    assert herd.wait_state(cancelled[1], "cancelled")["outcome"] == "dependency_failed"
    return {"held": held, "waiting": waiting, "after_held": after_held}


def test_a_sweeps_names_take_the_room_its_empty_columns_leave(
    board: Board, sweep: list[int], expect: Any
) -> None:
    """Before: at 1280 px `learning_rate=0.0003,o…`, cut at 150 px, while the GPUs and Info
    columns, empty, and every short column took a share of the room left over."""
    page = board.page(f"/jobs?sweep={SWEEP}")  # 1280 px wide
    names = page.locator("table.jobs tbody td.name")
    expect(names).to_have_count(len(sweep))
    shown = names.evaluate_all(NAMES_SHOWN)
    assert {name for name, _ in shown} == {
        f"learning_rate={lr},optimizer={opt}"
        for lr in ("0.001", "0.0003")
        for opt in ("adamw", "sgd_momentum")
    }
    assert all(whole for _, whole in shown), shown
    for width in WIDTHS:  # and the table stays in its box
        page.set_viewport_size({"width": width, "height": 800})
        widths = page.locator(".table-scroll").evaluate(FITS)
        assert widths[0] <= widths[1], (width, widths)
    # Below 1200 px the columns have budgets: the Info column, empty on this page, keeps to
    # its heading (it had a third of the room Name, Info and Command share).
    page.set_viewport_size({"width": 1024, "height": 800})
    info, name = (page.locator(f"table.jobs th:text-is('{h}')") for h in ("Info", "Name"))
    info_px, name_px = (
        th.evaluate("th => th.getBoundingClientRect().width") for th in (info, name)
    )
    assert info_px * 3 < name_px, (info_px, name_px)
    page.close()


def test_a_crowded_page_fits_the_window_and_names_give_way(
    board: Board, crowded: dict[str, int], expect: Any
) -> None:
    """Reasons why jobs wait, `dependency_failed`, a waiting job's two lines of buttons and
    a long name: the table kept to its box at 1280 and 1920 px, not at 1200 (1221 px in 1155:
    names and commands were 150 px whatever the room)."""
    page = board.page("/jobs?project=crowd")
    reason = page.locator(f"#job-{crowded['waiting']} td.reason")
    expect(reason).to_have_text("waiting for 4 free GPUs")
    for width in (1200, 1280, 1920):
        page.set_viewport_size({"width": width, "height": 800})
        widths = page.locator(".table-scroll").evaluate(FITS)
        assert widths[0] <= widths[1], (width, widths)
        held = page.locator(f"#job-{crowded['held']} td.name")  # cut, whole in its title
        expect(held).to_have_attribute(
            "title", "resnet152-imagenet-cosine-warmup-lr=3e-4,wd=0.05,seed=11"
        )
    page.close()


EDIT = "details.edit-job"


def _placeholders(page: Any, form: str) -> list[dict[str, Any]]:
    """Each box of `form` with a placeholder: its name, placeholder, how the placeholder is
    drawn beside a value, and whether it shows whole."""
    found: list[dict[str, Any]] = page.locator(form).evaluate(
        """form => [...form.querySelectorAll('[placeholder]')].map(box => {
          const hint = getComputedStyle(box, '::placeholder'), value = getComputedStyle(box);
          const pen = document.createElement('canvas').getContext('2d');
          pen.font = `${hint.fontStyle} ${hint.fontWeight} ${hint.fontSize} ${hint.fontFamily}`;
          const line = box.placeholder.split('\\n')[0];
          const room = box.clientWidth - parseFloat(value.paddingLeft)
            - parseFloat(value.paddingRight);
          return {name: box.name, text: box.placeholder, italic: hint.fontStyle === 'italic',
                  lighter: hint.fontWeight !== value.fontWeight,
                  whole: pen.measureText(line).width <= room};
        })"""
    )
    return found


@pytest.mark.parametrize("width", [1280, 390])
def test_placeholders_read_as_hints_not_values(board: Board, width: int) -> None:
    """Before: `none` (max log size, name, project), `any`, `no job`, `config retries` and
    `its folder's stdout.log`, in the bold grey of a value, as if typed in."""
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    page.set_viewport_size({"width": width, "height": 900})
    page.locator(f"{EDIT} summary").click()
    edit = _placeholders(page, f"{EDIT} form")
    assert {"e.g. 10GiB — empty: no cap"} == {
        b["text"] for b in edit if b["name"] == "max_log_size"
    }
    page.goto(f"{board.base}/submit")
    page.locator("details.more-options summary").click()
    submit = _placeholders(page, "form.submit")
    assert len(edit) >= 14 and len(submit) >= 17, (edit, submit)
    for box in edit + submit:
        assert box["text"].startswith(("e.g. ", "empty: ")), box
        assert box["italic"] and box["lighter"] and box["whole"], box
    page.close()


def test_an_edit_refused_is_said_by_its_box_until_the_next_edit(board: Board, expect: Any) -> None:
    """Before: in the corner alone (`job 5 would never run: asks for 5 GPUs but gpuherd has only
    4`), gone at a click, or with the next message."""
    job_id = board.submit("--hold", "--gpus", "1", "--", "true")
    page = board.page(f"/jobs/{job_id}")
    page.locator(f"{EDIT} summary").click()
    gpus = page.locator(f"{EDIT} [name=gpus]")
    gpus.fill("5")
    page.click("#edit-button")
    words = f"job {job_id} would never run: asks for 5 GPUs but gpuherd has only 4"
    expect(page.locator("#flash .flash.error")).to_contain_text(words)
    said = page.locator(f"{EDIT} label:has([name=gpus]) .edit-refusal")
    expect(said).to_contain_text(words)
    expect(gpus).to_have_attribute("aria-invalid", "true")
    page.locator("#flash .flash.error").click()  # put away, as a user does
    expect(page.locator("#flash .flash")).to_have_count(0)
    board.herd.cli("priority", str(job_id), "7")  # the page's head is drawn again
    expect(page.locator("dt:text-is('Priority') + dd")).to_have_text("7")
    expect(said).to_contain_text(words)  # kept, with what was typed
    expect(gpus).to_have_value("5")

    # Saved with nothing changed: said above Save, the box's words gone with the next edit.
    gpus.fill("1")
    page.click("#edit-button")
    above_save = page.locator(f"{EDIT} .edit-refusal + #edit-button")
    expect(above_save).to_have_count(1)
    expect(page.locator(f"{EDIT} .edit-refusal")).to_have_text(
        "nothing changed: edit a field, then save"
    )
    expect(gpus).not_to_have_attribute("aria-invalid", "true")
    page.fill(f"{EDIT} [name=name]", "renamed")
    page.click("#edit-button")
    expect(page.locator("#flash .flash.ok")).to_have_text(
        f"job {job_id}: edited ('name' none -> renamed)"
    )
    expect(page.locator(f"{EDIT} .edit-refusal")).to_have_count(0)
    page.close()


def test_a_refusal_is_about_the_box_edited_or_the_one_it_names() -> None:
    from gpuherd.api.dashboard_actions import refused_field

    assert refused_field("job 3 would never run: ...", ["gpus"]) == "gpus"
    said = "job 3 would never run: asks for 5 GPUs but gpuherd has only 4: give fewer 'GPUs'"
    assert refused_field(said, ["name", "gpus"]) == "gpus"
    assert refused_field("'after any end of': invalid job id 'x'", ["after", "after_any"]) == (
        "after_any"
    )
    assert refused_field("'GPUs' 2 with 'memory per GPU' 10GiB", ["gpus", "mem"]) is None
    assert refused_field("no job 3", ["gpus", "mem"]) is None
