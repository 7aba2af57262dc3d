"""What a QA pass at scale found on the dashboard: colour codes in logs, the keyboard's place
lost at every live refresh, a phone-sized window, a 10 KB command, a sweep plot's dots as tab
stops.

One daemon (2 fake GPUs, TCP listener) and one browser serve the module; the log test reads
over the daemon's Unix socket, as test_dashboard_pages.py does.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import SWEEP_CMD, Board, browser, expect, open_board
from test_dashboard_pages import call, post, sse_events

from conftest import wait_for

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

ESC = "\x1b"


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qa") / "home", "2") as b:
        yield b


def test_colour_codes_are_not_shown_in_a_logs_tail_or_stream(board: Board, tmp_path: Path) -> None:
    """A log's colours (ANSI escape codes) showed as a box and `[32m`; also one cut in two
    by the moment the stream read the file."""
    herd, flag = board.herd, tmp_path / "go"
    script = (
        r"printf '\033[1;32mgreen\033[0m plain\n\033]0;title\007half \033[3'; "
        f"while [ ! -e {shlex.quote(str(flag))} ]; do sleep 0.05; done; "
        r"printf '1mred\033[0m\n'"
    )
    job_id = board.submit("--gpus", "0", "--", "sh", "-c", script)
    log = f"/api/v1/jobs/{job_id}/log?stream=stdout"
    wait_for(lambda: call(herd, "GET", log).body.endswith("\x1b[3"), what="half a code written")
    page = call(herd, "GET", f"/jobs/{job_id}").body
    assert ">green plain\nhalf </pre>" in page  # the half code waits for its end
    stream = f"/ui/jobs/{job_id}/stream"
    first = sse_events(herd, stream, {}, until="stdout")
    assert first[-1][2] == "green plain\nhalf "
    flag.touch()
    rest = sse_events(herd, stream, {"Last-Event-ID": first[-1][1]}, until="end")
    assert [data for name, _, data in rest if name == "stdout"] == ["red\n"]
    assert ESC not in page and not any(ESC in data for _, _, data in first + rest)
    assert (
        "\x1b[1;32mgreen" in call(herd, "GET", log).body
    )  # the full log keeps them, for a terminal


def _focused(page: Any) -> str:
    return str(
        page.evaluate(
            "(() => { const a = document.activeElement, row = a.closest('tr');"
            " return (row ? row.id : '') + ' ' + a.tagName + ' ' + (a.value || ''); })()"
        )
    )


def test_the_keyboard_keeps_its_place_through_a_live_refresh(board: Board, expect: Any) -> None:
    """A busy queue refreshes the jobs table several times a second: the button Tab reached
    was replaced, the focus fell to the page, and Enter did nothing."""
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    page = board.page("/jobs?state=held")
    page.locator(f"#job-{job_id} .act-prio-up").focus()
    assert _focused(page) == f"job-{job_id} BUTTON prio-up"
    later = board.submit("--hold", "--gpus", "0", "--", "true")
    expect(page.locator(f"#job-{later}")).to_be_visible()  # the table was fetched again
    assert _focused(page) == f"job-{job_id} BUTTON prio-up"
    page.keyboard.press("Enter")
    wait_for(lambda: board.herd.job(job_id)["priority"] == 1, what="prio + sent by Enter")
    board.herd.cli("release", str(job_id))  # "release" becomes "hold": found by its place
    expect(page.locator(f"#job-{job_id}")).to_have_count(0)
    page.close()


def test_a_phone_sized_window_needs_no_sideways_scrolling(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """At 390 px the top links ran off the screen (Sweeps out of reach) and the tables
    widened the page; now they scroll in their own box."""
    job_id = board.submit("--hold", "--gpus", "0", "--name", "phone", "--", "sleep 1")
    _sweep(board, tmp_path, "phone-sweep")
    for path in ("/", "/jobs", f"/jobs/{job_id}", "/gpus", "/sweeps", "/sweeps/phone-sweep"):
        page = board.page(path)
        page.set_viewport_size({"width": 390, "height": 844})
        expect(page.locator("header.top nav a").last).to_be_in_viewport(ratio=1)
        widths = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], (path, widths)
        page.close()


def test_a_long_command_scrolls_in_its_box(board: Board) -> None:
    command = "echo " + "x" * 10_240
    job_id = board.submit("--hold", "--gpus", "0", "--", command)
    page = board.page(f"/jobs/{job_id}")
    box = page.locator("dl.facts pre.command")

    def laid_out() -> list[int] | None:  # (a live refresh may swap the job's head meanwhile)
        sizes: list[int] = box.evaluate("b => [b.clientHeight, b.scrollHeight]")
        return sizes if sizes[0] else None

    sizes = wait_for(laid_out, what="the command's box to be laid out")
    assert sizes[0] < 250 < sizes[1], sizes  # at most about 12 lines shown; it scrolls
    assert page.locator("dt", has_text="Priority").is_visible()
    page.close()


def _sweep(board: Board, folder: Path, name: str) -> None:
    """A sweep of three points with metrics, finished."""
    args = ["sweep", SWEEP_CMD, "-p", "x", "0.5", "0.1", "0.9", "--gpus", "0", "--name", name]
    ids = [int(i) for i in board.herd.cli(*args, "-q", cwd=folder).stdout.split()]
    for job_id in ids:
        board.herd.wait_state(job_id, "succeeded")


def test_the_plot_by_keyboard(board: Board, expect: Any, tmp_path: Path) -> None:
    """Every dot of a sweep's plot was a tab stop: past the plot's controls, a keyboard went
    through thousands of dots before the table (whose rows link to the same jobs). And the
    first arrow key in a select reloaded the page, the focus lost."""
    _sweep(board, tmp_path, "keys")
    page = board.page("/sweeps/keys")
    assert page.locator("svg.plot a").count() == 3
    page.locator(".plot-controls button").focus()
    page.keyboard.press("Tab")
    where = page.evaluate("document.activeElement.closest('svg, table.sweep-table').tagName")
    assert where.lower() == "table"
    page.evaluate("window.notReloaded = true")
    metric = page.locator("#plot-metric")
    expect(metric).to_have_value("acc")
    metric.focus()
    page.keyboard.press("ArrowDown")
    expect(metric).to_have_value("err")
    assert page.evaluate("window.notReloaded") is True
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"metric=err"))
    expect(page.locator("#plot-metric")).to_have_value("err")
    page.close()


def test_a_chatty_jobs_page_keeps_only_the_logs_end(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """A job's page appended every line the job printed: left open on a chatty job, it grew
    without end. It keeps about the last 768 KiB (at most 1 MiB) and says the rest is in the
    full log."""
    flag = tmp_path / "go"
    chatty = (
        f"import os, sys, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.05)\n"
        "for i in range(40):\n"
        "    sys.stdout.write(('batch %d ' % i + 'x' * 90 + '\\n') * 650)\n"
        "    sys.stdout.flush(); time.sleep(0.05)\n"
        "print('the end')\n"
    )
    job_id = board.submit("--gpus", "0", "--", "python3", "-c", chatty)
    page = board.page(f"/jobs/{job_id}")
    expect(page.locator("#log-stdout-cut")).to_be_hidden()
    flag.touch()
    log = page.locator("#log-stdout")
    expect(log).to_contain_text("the end", timeout=30_000)
    assert board.herd.job(job_id)["state"] == "succeeded"
    text = log.evaluate("pre => pre.textContent")
    assert 700_000 < len(text) <= 1024 * 1024, len(text)  # 2.6 MB were sent
    assert text.startswith("batch ") and text.endswith("batch 39 " + "x" * 90 + "\nthe end\n")
    expect(page.locator("#log-stdout-cut")).to_be_visible()
    page.close()


HIDE = (
    "Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
    " document.dispatchEvent(new Event('visibilitychange'))"
)
SHOW = HIDE.replace("'hidden'", "'visible'")


def test_tabs_in_the_background_let_a_seventh_load(board: Board, expect: Any) -> None:
    """Chromium opens at most 6 connections to a host and each page's event stream holds one:
    with six dashboard tabs open a seventh never loaded. A hidden tab lets its stream go."""
    background = []
    for path in ("/", "/jobs", "/gpus", "/sweeps", "/jobs", "/"):
        page = board.page(path)
        page.evaluate(HIDE)  # as a tab behind the one in use
        background.append(page)
    seventh = board.page("/jobs")
    job_id = board.submit("--hold", "--gpus", "0", "--name", "seventh", "--", "true")
    expect(seventh.locator(f"#job-{job_id}")).to_be_visible()  # its stream works too
    back, errors = background[1], []
    back.on("console", lambda message: errors.append(message.text))
    back.evaluate(SHOW)
    expect(back.locator(f"#job-{job_id}")).to_be_visible()  # caught up once shown
    assert errors == []  # opened again as it was, not through an error
    for page in [*background, seventh]:
        page.close()


REASON_CELLS = """cells => cells.map(cell => {
  // The lines of the text as they show: a reason cut short ("…") has lines that do not.
  const holder = cell.firstElementChild || cell;
  const bottom = holder.getBoundingClientRect().bottom + 1;
  const range = document.createRange();
  range.selectNodeContents(holder);
  const lines = [...range.getClientRects()];
  const style = getComputedStyle(cell);
  return {
    text: cell.textContent.trim(),
    title: holder.title || cell.title,
    width: cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    lines: new Set(lines.filter(r => r.bottom <= bottom).map(r => Math.round(r.top))).size,
    whole: lines.every(r => r.bottom <= bottom),
  };
})"""


def test_why_a_job_waits_is_readable_at_1280_px(board: Board, expect: Any, tmp_path: Path) -> None:
    """At 1280 px the actions column took the room of "Why waiting": a reason ran four lines
    down a cell 100-130 px wide (the docs' screenshot of the jobs page). The column is at least
    10rem wide, and a reason at most three lines, as tall as a waiting job's two lines of
    buttons; a longer one ends in "…", whole in its title."""
    command = "sleep 60 {x} #" + " --lr 0.01" * 20  # long, as a sweep's commands are
    long_name = "a-sweep-whose-name-goes-on-" * 5
    ids: dict[str, list[str]] = {}
    for name in ("vit-seeds", long_name):
        args = ["sweep", command, "-p", "x", "1", "2", "--gpus", "1", "--max-parallel", "1"]
        ids[name] = board.herd.cli(*args, "--name", name, "-q", cwd=tmp_path).stdout.split()
    for running, _ in ids.values():  # (one running job a row of five buttons on one line)
        board.herd.wait_state(int(running), "running")
    page = board.page("/jobs")  # 1280 px wide
    short = "waiting: sweep vit-seeds runs 1 at a time (--max-parallel)"
    expect(page.locator(f"#job-{ids['vit-seeds'][1]} td.reason")).to_have_text(short)
    rem = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    cells = page.locator("table.jobs td.reason").evaluate_all(REASON_CELLS)
    reasons = {cell["text"]: cell for cell in cells if cell["text"]}
    for cell in reasons.values():
        assert cell["width"] >= 10 * rem - 0.5 and cell["lines"] <= 3, cell
    assert reasons[short]["whole"], reasons[short]
    long_reason = f"waiting: sweep {long_name} runs 1 at a time (--max-parallel)"
    cut = reasons[long_reason]
    assert (cut["whole"], cut["lines"], cut["title"]) == (False, 3, long_reason), cut
    box = "document.querySelector('.table-scroll')"
    widths = page.evaluate(f"() => [{box}.scrollWidth, {box}.clientWidth]")
    assert widths[0] <= widths[1], widths  # all of it in the window: nothing to scroll to
    board.herd.cli("kill", *ids["vit-seeds"], *ids[long_name])
    page.close()


def test_a_button_on_a_job_removed_meanwhile_says_so_in_one_line(board: Board) -> None:
    """Every button answers "no job N" for a job removed since the page was drawn; prio +
    and prio − gave the CLI's hint instead ("`gpuherd ls --all` lists the jobs there are")."""
    job_id = board.submit("--hold", "--gpus", "0", "--", "true")
    board.herd.cli("rm", str(job_id))
    for action in ("prio-up", "prio-down", "hold", "kill", "retry"):
        answer = post(board.herd, "/ui/jobs/act", action=action, ids=str(job_id)).body
        assert answer.strip() == f'<div class="flash error">no job {job_id}</div>', action


def test_a_jobs_page_says_so_when_its_job_is_removed(board: Board, expect: Any) -> None:
    """A job removed under its page (`gpuherd rm` in a shell): its stream ended, and the page
    went on showing the job and its buttons as if it were still there, saying nothing."""
    job_id = board.submit("--gpus", "0", "--", "true")
    board.herd.wait_state(job_id, "succeeded")
    page = board.page(f"/jobs/{job_id}")
    expect(page.locator("#job-head")).to_contain_text("succeeded")
    board.herd.cli("rm", str(job_id))
    said = f"no job {job_id}: `gpuherd ls --all` lists the jobs there are"
    expect(page.locator("#flash .flash.error")).to_have_text(said)
    page.close()


def test_a_running_jobs_buttons_take_one_line_of_the_jobs_table(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """At 1280 px a running job's five buttons (kill, pause, retry, prio +, prio −) took two
    lines of its row beside a long reason why another waits, as the docs' screenshot of the
    jobs page showed; a waiting job's six may take two, inside the table (as
    test_dashboard_move.py checks)."""
    ended = board.submit("--gpus", "0", "--", "true")  # a wide pill: succeeded
    name, words = "lr-sweep-" * 4, " --lr 0.01" * 20
    command = f"sleep 60 {{x}} #{words}"
    args = ["sweep", command, "-p", "x", "1", "2", "--gpus", "0", "--max-parallel", "1"]
    running, waiting = board.herd.cli(*args, "--name", name, "-q", cwd=tmp_path).stdout.split()
    board.herd.wait_state(int(running), "running")
    board.herd.wait_state(ended, "succeeded")
    page = board.page("/jobs")  # 1280 px wide
    expect(page.locator(f"#job-{waiting} td.reason")).to_contain_text("--max-parallel")
    row = page.locator(f"#job-{running}")
    tops = {row.locator(f".act-{action}").bounding_box()["y"] for action in ("kill", "prio-down")}
    assert len(tops) == 1, tops  # on one line
    expect(page.locator(f"#job-{waiting} .act-rm")).to_be_in_viewport(ratio=1)
    board.herd.cli("kill", waiting, running)
    page.close()


WHOLE_IN_ITS_BOX = """cell => {
  // Every letter of the cell inside the cell, and the cell inside the table's box as shown.
  const range = document.createRange();
  range.selectNodeContents(cell);
  const text = range.getBoundingClientRect(), own = cell.getBoundingClientRect();
  const box = cell.closest('.table-scroll').getBoundingClientRect();
  return cell.scrollWidth <= cell.clientWidth && text.left >= own.left
    && text.right <= own.right && own.right <= box.right;
}"""


def test_a_dependency_failed_outcome_fits_the_jobs_table_at_1280_px(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """A job cancelled because the job it waited for failed shows `dependency_failed`, one
    word of 145 px: beside a running job's buttons and a reason why another waits, it made
    the jobs table scroll sideways in its box at 1280 px. It wraps after its underscore."""
    failed = board.submit("--gpus", "0", "--", "false")
    board.herd.wait_state(failed, "failed")
    after = board.herd.cli("submit", "-q", "--after", str(failed), "--gpus", "0", "--", "true")
    cancelled = int(after.stdout.split()[0])  # at once: job `failed` already failed
    command = "sleep 60 #" + " --lr 0.01" * 20
    running = board.submit("--gpus", "1", "--name", "lr-" * 20, "--", command)
    board.herd.wait_state(running, "running")
    waiting = board.submit("--gpus", "2", "--name", "needs-both", "--", command)
    page = board.page("/jobs")  # 1280 px wide
    expect(page.locator(f"#job-{waiting} td.reason")).to_contain_text("2 free GPUs")
    cell = page.locator(f"#job-{cancelled} td.exit")
    expect(cell).to_have_text("dependency_failed")  # what a search or a copy finds
    box = "document.querySelector('.table-scroll')"
    widths = page.evaluate(f"() => [{box}.scrollWidth, {box}.clientWidth]")
    assert widths[0] <= widths[1], widths  # nothing to scroll to
    assert cell.evaluate(WHOLE_IN_ITS_BOX)
    assert board.herd.job(cancelled)["outcome"] == "dependency_failed"  # the API's as it was
    board.herd.cli("kill", str(running), str(waiting))
    page.close()


def test_long_words_need_no_sideways_scrolling_at_800_px(board: Board, tmp_path: Path) -> None:
    """At 800x600 a project of one long word ran past the job's page, a sweep of a long name
    widened the jobs page (its filter's select), and a long variable's value cut the name
    beside it in two (HF_HO, ME)."""
    sweep = "imagenet-resnet50-ablation-" * 6
    args = ["-p", "x", "1", "--hold", "--gpus", "0", "--name", sweep]
    board.herd.cli("sweep", "echo {x}", *args, cwd=tmp_path)
    project, tags = "p" * 120, "WANDB_TAGS=" + "tag," * 60
    env = ["--env", "HF_HOME=/scratch/cache", "--env", tags]
    job_id = board.submit("--hold", "--gpus", "0", "--project", project, *env, "--", "true")
    widths, lines = {}, 0
    for path in ("/jobs", f"/jobs/{job_id}"):
        page = board.page(path)
        page.set_viewport_size({"width": 800, "height": 600})
        widths[path] = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        if path != "/jobs":
            name = page.locator("table.env code", has_text="HF_HOME")
            lines = name.evaluate("code => code.getClientRects().length")
        page.close()
    assert (lines, [path for path, (wide, shown) in widths.items() if wide > shown]) == (1, [])
    board.herd.cli("sweep", "rm", sweep)
    board.herd.cli("rm", str(job_id))


PLACEHOLDER_ROOM = """input => {
  // The placeholder typed as the box's value: does it overflow? A search box keeps room for
  // its clear button (hidden while empty) beside the text, so the placeholder's width
  // against the box's padding passed while chromium cut it to "Id, name, commanc".
  input.value = input.placeholder;
  const room = [input.scrollWidth, input.clientWidth];
  input.value = '';
  return room;
}"""


def test_the_jobs_search_box_shows_its_whole_placeholder(board: Board) -> None:
    """At 1280 px the placeholder "Id, name, command" showed as "Id, name, commanc".
    At 390 px the box stays inside the window (the phone test sees the whole page)."""
    page = board.page("/jobs")  # 1280 px wide
    search = page.locator('form.filters input[type="search"]')
    assert search.get_attribute("placeholder") == "Id, name, command"
    wide, room = search.evaluate(PLACEHOLDER_ROOM)
    assert 0 < wide <= room, (wide, room)
    page.set_viewport_size({"width": 390, "height": 844})
    wide, room = search.evaluate(PLACEHOLDER_ROOM)
    assert wide <= room and search.evaluate("box => box.getBoundingClientRect().right") <= 390
    page.close()


# The filter row's boxes: each one's top, bottom and right edge.
FILTER_BOXES = """() => [...document.querySelectorAll('form.filters > *')].map(e => {
  const box = e.getBoundingClientRect();
  return [box.top, box.bottom, box.right];
})"""


def test_a_long_sweep_name_keeps_the_jobs_filters_on_one_line(board: Board, tmp_path: Path) -> None:
    """A sweep named in 200 characters widened its filter (a select is as wide as its longest
    option) and pushed the Filter button to a second line at 1280 px."""
    sweep = "s" * 200
    args = ["-p", "x", "1", "--hold", "--gpus", "0", "--name", sweep]
    board.herd.cli("sweep", "echo {x}", *args, cwd=tmp_path)
    page = board.page("/jobs")  # 1280 px wide
    assert page.locator("#sweep-filter option", has_text=sweep).count() == 1
    boxes = page.evaluate(FILTER_BOXES)
    # One line: every box (the chips, the boxes, the select, the button) starts above the
    # bottom of every other.
    assert max(top for top, _, _ in boxes) < min(bottom for _, bottom, _ in boxes), boxes
    for width in (390, 800):  # narrower, the row wraps, but nothing leaves the window
        page.set_viewport_size({"width": width, "height": 844})
        rights = [right for _, _, right in page.evaluate(FILTER_BOXES)]
        assert max(rights) <= width, (width, rights)
    page.close()
    board.herd.cli("sweep", "rm", sweep)
