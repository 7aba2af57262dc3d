"""The dashboard in a real browser: Python Playwright driving Debian's chromium.

One daemon (fake GPUs, TCP listener on a free port) and one browser serve the whole module
(the browser is kept for the worker's next browser module: tests/browsers.py).
Without /usr/bin/chromium (or the playwright package) these tests skip, except in CI
(CI=true), where they fail: `.ci/run` installs chromium.

test_dashboard_screenshots.py (GPUHERD_SCREENSHOTS=1) saves a screenshot of each page.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import browsers
from conftest import Herd, wait_for

CHROMIUM = os.environ.get("GPUHERD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 10_000
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(f"{reason}: the browser tests run in CI; `apt-get install chromium` to run here")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        _unavailable(f"no {CHROMIUM}")
    if importlib.util.find_spec("playwright") is None:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    playwright, chromium = browsers.take(CHROMIUM, CHROMIUM_ARGS)
    try:
        yield chromium
    finally:
        browsers.keep(playwright, chromium)


class Board:
    """A daemon with a TCP listener, and a browser context that holds its cookie."""

    def __init__(self, herd: Herd, url: str, context: Any) -> None:
        self.herd = herd
        self.url = url
        self.base = url.split("/?")[0]
        self.context = context

    def page(
        self,
        path: str = "/",
        dialogs: list[str] | None = None,
        accept: bool = False,
        before: Callable[[Any], None] | None = None,
    ) -> Any:
        """A new tab on `path`; JavaScript dialogs (alert, confirm) are recorded in `dialogs`,
        and dismissed (`accept`: accepted, as a user who confirms an action). `before` is
        given the tab before it loads `path` (to listen to its requests, route them)."""
        page = self.context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        if dialogs is not None:
            answer = "accept" if accept else "dismiss"
            page.on(
                "dialog", lambda dialog: (dialogs.append(dialog.message), getattr(dialog, answer)())
            )
        if before is not None:
            before(page)
        page.goto(self.base + path)
        return page

    def submit(self, *args: str) -> int:
        return self.herd.submit(*args)


@contextmanager
def open_board(
    browser: Any, home: Path, fake_gpus: str, env: dict[str, str] | None = None
) -> Iterator[Board]:
    """A daemon on `fake_gpus` with a TCP listener (`env` added to its environment), and a
    browser context logged in to it."""
    herd = Herd(home)
    herd.env.update(env or {})
    try:
        herd.start("--fake-gpus", fake_gpus, "--listen", "127.0.0.1:0")
        url = herd.cli("ui", "--url").stdout.strip()
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = context.new_page()
            page.goto(url)  # ?token= sets the cookie and drops the token from the URL
            assert "token=" not in page.url
            page.close()
            yield Board(herd, url, context)
        finally:
            context.close()
    finally:
        herd.cleanup()


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("e2e") / "home", "4") as b:
        yield b


@pytest.fixture
def expect() -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    return expect


def _waiter(folder: Path, name: str, before: str = "", after: str = "") -> tuple[str, Path]:
    """A shell command that prints `before`, waits for the file `name`, then prints `after`."""
    flag = folder / name
    script = (
        f"echo {shlex.quote(before)}; "
        f"while [ ! -e {shlex.quote(str(flag))} ]; do sleep 0.05; done; "
        f"echo {shlex.quote(after)}"
    )
    return script, flag


def test_overview_shows_a_card_per_gpu(board: Board, expect: Any) -> None:
    page = board.page("/")
    expect(page.locator(".card.gpu")).to_have_count(4)
    expect(page.locator(".card.gpu").first).to_contain_text("GPU 0")
    expect(page.locator(".card.gpu").first).to_contain_text("24.0 GiB")
    expect(page.locator("#queue-state")).to_have_text("Queue running")
    page.close()


def test_submit_from_the_form_then_watch_it_run_and_finish(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    watcher = board.page("/jobs")
    watcher.evaluate("window.notReloaded = true")
    command, flag = _waiter(tmp_path, "go", "from the form", "done")
    form = board.page("/submit")
    form.fill("textarea[name=commands]", command)
    form.fill("input[name=name]", "form-job")
    form.fill("input[name=gpus]", "0")
    form.fill("input[name=cwd]", str(tmp_path))
    form.click("#submit-button")
    expect(form.locator(".flash.ok")).to_contain_text("Submitted job")
    job_id = int(form.url.split("submitted=")[1])
    row = watcher.locator(f"#job-{job_id}")
    expect(row).to_contain_text("form-job")
    expect(row.locator(".pill")).to_have_text("running")
    flag.touch()
    expect(row.locator(".pill")).to_have_text("succeeded")
    expect(row).to_contain_text("exit 0")
    assert watcher.evaluate("window.notReloaded") is True
    watcher.close()
    form.close()


def test_a_job_page_shows_its_output_as_it_comes(board: Board, expect: Any, tmp_path: Path) -> None:
    command, flag = _waiter(tmp_path, "go", "first line", "second line")
    job_id = board.submit("--gpus", "0", "--", "sh", "-c", command)
    page = board.page(f"/jobs/{job_id}")
    page.evaluate("window.notReloaded = true")
    log = page.locator("#log-stdout")
    expect(log).to_contain_text("first line")
    expect(page.locator("#job-state")).to_have_text("running")
    flag.touch()
    expect(log).to_contain_text("second line")
    expect(page.locator("#job-state")).to_have_text("succeeded")
    assert log.inner_text().count("first line") == 1  # nothing shown twice
    assert page.evaluate("window.notReloaded") is True
    download = page.locator("a[download]").first.get_attribute("href")
    assert download == f"/api/v1/jobs/{job_id}/log?stream=stdout&attempt=1"
    page.close()


def test_a_progress_bar_redrawn_in_place_stays_one_line(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """tqdm redraws its bar with carriage returns: the page shows the bar's last drawing, as a
    terminal does, not a line per redraw (and a CRLF line ending wipes nothing)."""
    more, done = tmp_path / "more", tmp_path / "done"
    frames = "".join(f"\\r{p:3d}%%" for p in range(0, 60, 10))  # %% for printf
    later = "".join(f"\\r{p:3d}%%" for p in range(60, 100, 10))
    script = (
        f"printf 'start\\r\\n{frames}'; while [ ! -e {more} ]; do sleep 0.05; done; "
        f"printf '{later}'; while [ ! -e {done} ]; do sleep 0.05; done; printf '\\ndone\\n'"
    )
    job_id = board.submit("--gpus", "0", "--", "sh", "-c", script)
    page = board.page(f"/jobs/{job_id}")
    log = page.locator("#log-stdout")
    expect(log).to_have_text("start\n 50%")  # the tail as the page began: collapsed
    more.touch()
    expect(log).to_have_text("start\n 90%")  # redrawn live: no line per frame
    done.touch()
    expect(log).to_have_text("start\n 90%\ndone\n")
    expect(page.locator("#job-state")).to_have_text("succeeded")
    page.close()


def test_a_line_redrawn_after_its_return_is_overwritten_not_appended_to(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    """A bar that draws then returns (`step 2\\r`) is overwritten by the next drawing: the
    page that opened between the two showed `step 2step 3`. A last return with nothing after
    it leaves the line shown, as a terminal does."""
    go, drawn = tmp_path / "go", tmp_path / "drawn"
    script = (
        f"printf 'step 1\\rstep 2\\r'; : > {drawn}; "
        f"while [ ! -e {go} ]; do sleep 0.05; done; printf 'step 3\\r'"
    )
    job_id = board.submit("--gpus", "0", "--", "sh", "-c", script)
    wait_for(drawn.exists, what="the job to draw step 2")
    page = board.page(f"/jobs/{job_id}")
    log = page.locator("#log-stdout")
    expect(log).to_have_text("step 2")
    go.touch()
    expect(page.locator("#job-state")).to_have_text("succeeded")
    expect(log).to_have_text("step 3")
    page.close()


def test_kill_a_running_job_with_its_button(board: Board, expect: Any) -> None:
    # The page is open first, so the list's live refresh that shows the job running is the
    # last one before the click (a click held through a refresh: the test below).
    asked: list[str] = []
    page = board.page("/jobs", asked, accept=True)
    job_id = board.submit("--gpus", "0", "--name", "to-kill", "--", "sleep", "60")
    board.herd.wait_state(job_id, "running")
    row = page.locator(f"#job-{job_id}")
    expect(row.locator(".pill")).to_have_text("running")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.post_data or "") if r.method == "POST" else None)
    row.locator("button.act-kill").click()
    # Once, in a full run, this said "already stopping (SIGKILL in 9.9s)": not a second POST
    # but a daemon slow in its first kill (test_stopping.py, a first kill says stopping).
    expect(page.locator("#flash")).to_contain_text(f"job {job_id}: stopping")
    assert asked == [f"Job {job_id} is running: kill it? Its work so far is lost."]
    expect(row.locator(".pill")).to_have_text("killed")
    assert board.herd.job(job_id)["state"] == "killed"
    assert posts == [f"ids={job_id}&next=%2Fjobs%3F&action=kill"]  # one click, one kill
    page.close()


def test_a_click_held_through_a_live_refresh_of_the_list_is_not_lost(
    board: Board, expect: Any
) -> None:
    page = board.page("/jobs", [], accept=True)  # (the kill asks first)
    job_id = board.submit("--gpus", "0", "--name", "to-kill", "--", "sleep", "60")
    board.herd.wait_state(job_id, "running")
    row = page.locator(f"#job-{job_id}")
    expect(row.locator(".pill")).to_have_text("running")
    page.evaluate(
        """() => { window.listFetched = 0; document.addEventListener("htmx:afterRequest",
        (e) => { if (e.detail.elt.id === "jobs-live") window.listFetched++; }); }"""
    )
    box = row.locator("button.act-kill").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    other = board.submit("--hold", "--name", "meanwhile", "--", "true")  # the list refreshes
    page.wait_for_function("() => window.listFetched > 0")
    page.mouse.up()  # the button pressed is still the one released on: a click
    expect(page.locator("#flash")).to_contain_text(f"job {job_id}: stopping")
    expect(page.locator(f"#job-{other}")).to_be_visible()  # the refresh held back came after
    expect(row.locator(".pill")).to_have_text("killed")
    page.close()


def test_edit_a_held_job_from_its_page(board: Board, expect: Any) -> None:
    job_id = board.submit("--hold", "--gpus", "0", "--name", "to-edit", "--", "echo typo")
    page = board.page(f"/jobs/{job_id}")
    page.locator("details.edit-job summary").click()
    page.fill("details.edit-job textarea[name=command]", "echo fixed")
    page.fill("details.edit-job input[name=name]", "")
    page.click("#edit-button")
    expect(page.locator("#flash")).to_contain_text(
        f"job {job_id}: edited ('command', 'name' to-edit -> none)"
    )
    expect(page.locator("pre.command")).to_have_text("echo fixed")  # the page drew it again
    job = board.herd.job(job_id)
    assert (job["command"], job["name"], job["state"]) == ("echo fixed", None, "held")
    page.close()


def test_pause_and_resume_the_queue_with_the_button(board: Board, expect: Any) -> None:
    page = board.page("/")
    page.click("#queue-toggle")
    expect(page.locator("#queue-state")).to_have_text("Queue paused")
    assert board.herd.client.get("/daemon")["queue_paused"] is True
    page.click("#queue-toggle")
    expect(page.locator("#queue-state")).to_have_text("Queue running")
    assert board.herd.client.get("/daemon")["queue_paused"] is False
    page.close()


def test_bulk_action_on_ticked_rows_survives_live_updates(board: Board, expect: Any) -> None:
    held = [board.submit("--hold", "--gpus", "0", "--", "true") for _ in range(2)]
    page = board.page("/jobs?state=held")
    for job_id in held:
        page.locator(f"#job-{job_id} input.pick").check()
    other = board.submit("--hold", "--gpus", "0", "--name", "arrives-later", "--", "true")
    expect(page.locator(f"#job-{other}")).to_be_visible()  # the table was fetched again
    for job_id in held:
        expect(page.locator(f"#job-{job_id} input.pick")).to_be_checked()
    expect(page.locator(f"#job-{other} input.pick")).not_to_be_checked()
    page.locator("#bulk button[value=release]").click()
    for job_id in held:
        board.herd.wait_state(job_id, "succeeded")
        expect(page.locator(f"#job-{job_id}")).to_have_count(0)  # no longer held
    assert board.herd.job(other)["state"] == "held"
    page.close()


def test_a_browser_without_the_token_is_refused(board: Board, browser: Any) -> None:
    stranger = browser.new_context()
    page = stranger.new_page()
    response = page.goto(board.base + "/jobs")
    assert response is not None and response.status == 403
    assert "needs its token" in page.inner_text("body")
    stranger.close()


def test_a_script_tag_in_a_name_renders_as_text(board: Board, expect: Any, tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    job_id = board.submit(
        "--gpus", "0", "--name", evil, "--", "echo", "<img src=x onerror=alert(2)>"
    )
    board.herd.wait_state(job_id, "succeeded")
    dialogs: list[str] = []
    for path in ("/", "/jobs", f"/jobs/{job_id}", f"/jobs?q={evil}"):
        page = board.page(path, dialogs)
        expect(page.get_by_text(evil).first).to_be_visible()
        if path == f"/jobs/{job_id}":
            expect(page.locator("#log-stdout")).to_contain_text("<img src=x onerror=alert(2)>")
        assert page.locator("img[src=x]").count() == 0
        page.close()
    assert dialogs == []


# ---- sweeps and telemetry --------------------------------------------------------------------

SWEEP_CMD = (
    "python3 -c 'import json, os, sys; x = float(sys.argv[1]);"
    ' json.dump(dict(acc=x, err=1 - x), open(os.path.join(sys.argv[2], "metrics.json"), "w"))\''
    " {x} {run_dir}"
)


def test_a_sweep_shows_live_with_its_table_and_plot(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    listing = board.page("/sweeps")
    listing.evaluate("window.notReloaded = true")
    out = board.herd.cli(
        "sweep",
        SWEEP_CMD,
        "-p",
        "x",
        "0.5",
        "0.1",
        "0.9",
        "--gpus",
        "0",
        "--hold",
        "--name",
        "browser-sweep",
        "-q",
        cwd=tmp_path,
    )
    ids = out.stdout.split()
    card = listing.locator('article.sweep[data-sweep="browser-sweep"]')
    expect(card).to_contain_text("3 points")  # arrived without a reload
    expect(card.locator(".count-queued")).to_contain_text("3 queued")
    expect(card.locator(".eta")).to_contain_text("no estimate until a point has finished")
    page = board.page("/sweeps/browser-sweep")
    page.evaluate("window.notReloaded = true")
    expect(page.locator("tr.point")).to_have_count(3)
    expect(page.locator("svg.plot")).to_have_count(0)  # nothing finished yet
    board.herd.cli("release", *ids)
    expect(card.locator(".count-done")).to_contain_text("3 done")
    expect(card.locator(".pct")).to_have_text("100%")
    plot = page.locator("svg.plot")
    expect(plot.locator("circle.pt")).to_have_count(3)  # one point per finished point
    expect(plot).to_have_attribute("aria-label", "acc against x")
    cells = page.locator('td[data-metric="acc"]')
    expect(cells).to_have_text(["0.5", "0.1", "0.9"])
    assert listing.evaluate("window.notReloaded") is True
    assert page.evaluate("window.notReloaded") is True
    page.locator('th a[data-sort="acc"]').click()
    expect(cells).to_have_text(["0.1", "0.5", "0.9"])
    page.locator('th a[data-sort="acc"]').click()
    expect(cells).to_have_text(["0.9", "0.5", "0.1"])
    assert "sort=-acc" in page.url
    page.select_option("#plot-metric", "err")
    expect(page.locator("svg.plot")).to_have_attribute("aria-label", "err against x")
    assert "sort=-acc" in page.url and "metric=err" in page.url  # the sort is kept
    page.locator("a", has_text="its jobs").first.click()
    expect(page.locator("tbody tr[id^=job-]")).to_have_count(3)
    expect(page.locator("#sweep-filter")).to_have_value("browser-sweep")
    listing.close()
    page.close()


def test_the_jobs_page_filters_by_sweep(board: Board, expect: Any, tmp_path: Path) -> None:
    board.herd.cli(
        "sweep",
        "true {x}",
        "-p",
        "x",
        "1",
        "2",
        "--gpus",
        "0",
        "--hold",
        "--name",
        "filtered",
        cwd=tmp_path,
    )
    board.submit("--hold", "--gpus", "0", "--name", "not-in-a-sweep", "--", "true")
    page = board.page("/jobs?state=held")
    expect(page.get_by_text("not-in-a-sweep")).to_be_visible()
    page.select_option("#sweep-filter", "filtered")
    page.locator("form.filters button").click()
    rows = page.locator("tbody tr[id^=job-]")
    expect(rows).to_have_count(2)
    name = rows.first.locator("td.name")  # held jobs: in the order they start
    expect(name).to_have_text("x=1")  # on the sweep's page, without the sweep's name
    expect(name).to_have_attribute("title", "filtered/x=1")
    assert "sweep=filtered" in page.url and "state=held" in page.url
    expect(page.get_by_text("not-in-a-sweep")).to_have_count(0)
    page.close()


def test_the_overview_shows_a_sparkline_per_gpu(board: Board, expect: Any) -> None:
    def ticked() -> bool:
        gpus = board.herd.client.get("/gpus")["gpus"]
        return all(len(gpu["history"]) >= 3 for gpu in gpus)

    wait_for(ticked, timeout=20, what="three telemetry readings of every GPU")
    page = board.page("/")
    cards = page.locator(".card.gpu")
    expect(cards).to_have_count(4)
    expect(cards.locator("svg.spark")).to_have_count(4)
    for n in range(4):
        line = cards.nth(n).locator("svg.spark polyline.util").first
        assert len((line.get_attribute("points") or "").split()) >= 3
    expect(cards.first.locator("figcaption")).to_contain_text("util 0%")
    page.close()


# ---- GPUs on several nodes -------------------------------------------------------------------


def test_gpus_on_nodes_show_their_node_and_a_job_shows_where_it_runs(
    browser: Any, expect: Any, tmp_path: Path
) -> None:
    # Two pretend nodes of two GPUs (a Ray cluster's shape; the jobs still run here).
    state = tmp_path / "gpus.json"
    gpus = [{"node": f"n{i // 2}", "host": f"box-{'ab'[i // 2]}"} for i in range(4)]
    state.write_text(json.dumps({"gpus": gpus}))
    with open_board(browser, tmp_path / "home", str(state)) as nodes:
        command, flag = _waiter(tmp_path, "go")
        one = nodes.submit("--", "sh", "-c", command)  # GPU 0, on box-a
        two = nodes.submit("--gpus", "2", "--", "sh", "-c", command)  # box-b, whole
        nodes.herd.wait_state(two, "running")
        assert nodes.herd.job(one)["gpus"] == [0]
        assert nodes.herd.job(two)["gpus"] == [2, 3]
        page = nodes.page("/gpus")
        expect(page.locator("table.gpus th", has_text="Node")).to_be_visible()
        expect(page.locator("#gpu-0 td.gpu-node")).to_have_text("box-a")
        expect(page.locator("#gpu-3 td.gpu-node")).to_have_text("box-b")
        overview = nodes.page("/")
        card = overview.locator('.card.gpu[data-gpu="2"]')
        expect(card.locator(".gpu-node")).to_have_text("on box-b")
        expect(card).to_contain_text(f"#{two}")
        job_page = nodes.page(f"/jobs/{two}")
        expect(job_page.locator("#job-node")).to_have_text(socket.gethostname())
        flag.touch()
        nodes.herd.wait_state(two, "succeeded")
        for tab in (page, overview, job_page):
            tab.close()
