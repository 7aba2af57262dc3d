"""A sweep of more points than one page of its table shows: every point reachable through
the pager, in the sort chosen over all the points, the plot showing them all; over the
daemon's Unix socket, then in Debian's chromium (as test_dashboard.py).

One daemon and one finished sweep of 450 points serve the module (the points take ~2 s).
"""

from __future__ import annotations

import html
import json
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect
from test_dashboard_pages import call

from conftest import Herd, wait_for
from gpuherd.api import views_plot

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

NAME = "big"
POINTS = 450  # 15 lr x 2 opt x 15 seed: pages of 200, 200 and 50
PAGE = 200
# Each point's accuracy from its number: 7919 is prime, so ((i * 7919) mod 450) / 450 gives the
# 450 points 450 different values, in an order unlike the grid's.
METRIC = """#!/bin/sh
awk -v i="$1" 'BEGIN { printf "{\\"acc\\": %.6f}\\n", ((i * 7919) % 450) / 450 }' \\
  > "$2/metrics.json"
"""


def finished_sweep(herd: Herd, folder: Path) -> None:
    script = folder / "metric.sh"
    script.write_text(METRIC)
    values = {"lr": [f"{k}e-4" for k in range(1, 16)], "opt": ["adam", "sgd"]}
    values["seed"] = [str(s) for s in range(15)]
    params = [word for name, vs in values.items() for word in ("-p", name, *vs)]
    command = f"sh {script} {{index}} {{run_dir}}"
    herd.cli("sweep", command, *params, "--gpus", "0", "--name", NAME, cwd=folder)

    def done() -> bool:
        rows = herd.client.get(f"/sweeps/{NAME}")["rows"]
        return sum(1 for r in rows if r["state"] == "succeeded") == POINTS

    wait_for(done, 240, f"the {POINTS} points to finish")


def indexes(body: str) -> list[int]:
    """The points of a page's table, by their numbers, top to bottom."""
    return [int(i) for i in re.findall(r'<tr class="point[^"]*" data-index="(\d+)"', body)]


def link(body: str, attribute: str) -> str | None:
    """The URL of the page's first link with `attribute` (data-page="next", ...)."""
    found = re.search(rf'<a [^>]*href="([^"]+)"[^>]*{attribute}', body)
    return html.unescape(found.group(1)) if found else None


def plotted(body: str) -> list[list[Any]]:
    """The plot's dots as plot.js reads them: [x, y, job, tooltip] each."""
    found = re.search(r"data-dots='([^']*)'", body)
    assert found, "no data-dots"
    data = json.loads(html.unescape(found.group(1)))
    dots = []
    for kind, y, job, value in data["dots"]:
        x, before, after = data["kinds"][kind]
        dots.append([x, y, job, before + value + after + (f", job {job})" if job else ")")])
    return dots


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    herd = Herd(tmp_path_factory.mktemp("big") / "home")
    try:
        herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")  # for the browser's tests
        # The points are CPU-only jobs of a few ms, mostly waiting on their processes' starts:
        # 8 at once, not one per core (2 here), take half the time (no test reads the setting).
        herd.cli("config", "set", "cpu-jobs", "8")
        finished_sweep(herd, herd.home.parent)
        yield herd
    finally:
        herd.cleanup()


def sorted_order(herd: Herd, sort: str) -> list[int]:
    """The points in the order of `sort`, as the sweep's JSON (`sweep status`) gives them."""
    return [r["index"] for r in herd.client.get(f"/sweeps/{NAME}", sort=sort)["rows"]]


def test_the_pager_reaches_every_point_in_the_order_sorted(swept: Herd) -> None:
    body = call(swept, "GET", f"/sweeps/{NAME}").body
    assert indexes(body) == sorted_order(swept, "")[:PAGE]  # the grid's order, a page of it
    assert f"points 1–200 of {POINTS}" in body and "page 1 of 3" in body
    for _ in range(2):  # a click on the header sorts, a second one descending
        body = call(swept, "GET", link(body, 'data-sort="acc"') or "").body
    descending = sorted_order(swept, "-acc")
    seen, pages = indexes(body), 1
    while (following := link(body, 'data-page="next"')) is not None:
        assert "sort=-acc" in following
        body = call(swept, "GET", following).body
        seen, pages = seen + indexes(body), pages + 1
    assert (seen, pages) == (descending, 3)  # every point once, best first, on 3 pages
    assert f"points 401–{POINTS} of {POINTS}, sorted by acc (descending)" in body
    # Every page plots every point (as a path per colour: two, not 450 dots each an element;
    # a dot is a vertex, drawn as its colour's marker), and its links keep the plot's choices
    # and the sort. Each dot's tooltip says its point, as a linked dot's title does.
    rows = swept.client.get(f"/sweeps/{NAME}")["rows"]
    dots = plotted(body)
    assert sorted(dot[2] for dot in dots) == sorted(r["job_id"] for r in rows)
    row = next(r for r in rows if r["job_id"] == dots[0][2])
    acc, opt = views_plot.label(row["metrics"]["acc"]), row["params"]["opt"]
    assert dots[0][3] == (
        f"lr = {row['params']['lr']}, acc = {acc}, opt = {opt} (succeeded, job {row['job_id']})"
    )
    start = body.index('<svg class="plot"')
    plot = body[start : body.index("</svg>", start)]
    assert plot.count('<path class="dots"') == 2 and plot.count("<marker") == 2
    assert plot.count("<circle") == 3  # the markers' and the link's
    first = link(body, 'data-page="first"') or ""
    assert "sort=-acc" in first and "page=" not in first
    assert indexes(call(swept, "GET", first).body) == descending[:PAGE]
    # A sort asked from a later page starts at the top of the new order.
    body = call(swept, "GET", f"/sweeps/{NAME}?sort=-acc&page=2").body
    assert indexes(body) == descending[PAGE : 2 * PAGE]
    by_seed = call(swept, "GET", link(body, 'data-sort="seed"') or "").body
    assert indexes(by_seed) == sorted_order(swept, "seed")[:PAGE]


def test_a_page_stays_itself_when_refreshed_and_past_the_end_is_the_last(swept: Herd) -> None:
    body = call(swept, "GET", f"/sweeps/{NAME}?sort=acc&page=2").body
    # The live refresh asks for the same page (it was the first page, whatever was shown).
    assert re.search(r'hx-get="/ui/sweeps/big\?sort=acc&amp;[^"]*page=2"', body)
    fragment = call(swept, "GET", f"/ui/sweeps/{NAME}?sort=acc&page=2").body
    assert indexes(fragment) == sorted_order(swept, "acc")[PAGE : 2 * PAGE]
    # The plot's form keeps the page too (choosing a metric does not change the table).
    assert '<input type="hidden" name="page" value="2">' in body
    # A page past the end (a link kept while the grid was narrowed) shows the last one.
    past = call(swept, "GET", f"/sweeps/{NAME}?sort=acc&page=99")
    assert past.status == 200 and "page 3 of 3" in past.body
    assert indexes(past.body) == sorted_order(swept, "acc")[2 * PAGE :]
    for junk in ("abc", "-4", "0"):  # a URL typed by hand: the first page
        body = call(swept, "GET", f"/sweeps/{NAME}?page={junk}").body
        assert indexes(body) == sorted_order(swept, "")[:PAGE], junk


# ---- in the browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def board(browser: Any, swept: Herd) -> Iterator[Board]:
    """The sweep's daemon in a browser context that holds its cookie."""
    url = swept.cli("ui", "--url").stdout.strip()
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.new_page().goto(url)  # ?token= sets the cookie
        yield Board(swept, url, context)
    finally:
        context.close()


def colour(page: Any, at: list[float]) -> bytes:
    """The colour of the page's pixel at `at` (a screenshot of that one pixel, as RGB)."""
    png = page.screenshot(clip={"x": int(at[0]), "y": int(at[1]), "width": 1, "height": 1})
    pos, data = 8, b""
    while pos < len(png):  # the PNG's chunks: length, kind, data, checksum
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data += png[pos + 8 : pos + 8 + length] if kind == b"IDAT" else b""
        pos += 12 + length
    # One row: its filter byte, then the pixel (no filter changes a first row's first pixel).
    return zlib.decompress(data)[1:4]


def rows(page: Any) -> list[int]:
    found = page.locator("tr.point").evaluate_all("rs => rs.map(r => r.dataset.index)")
    return [int(i) for i in found]


def test_sorting_and_paging_in_the_browser(board: Board, expect: Any) -> None:
    descending = sorted_order(board.herd, "-acc")
    page = board.page(f"/sweeps/{NAME}")
    points = page.locator("tr.point")
    expect(points).to_have_count(PAGE)
    header = page.locator('th a[data-sort="acc"]')
    header.click()
    expect(page.locator("th.sorted-asc")).to_contain_text("acc")
    page.locator('th a[data-sort="acc"]').click()
    expect(page.locator("th.sorted-desc")).to_contain_text("acc")
    assert rows(page) == descending[:PAGE]
    page.locator('a[data-page="next"]').first.click()
    expect(page.locator("tr.point").first).to_have_attribute("data-index", str(descending[PAGE]))
    assert rows(page) == descending[PAGE : 2 * PAGE]
    page.locator('a[data-page="next"]').first.click()
    expect(points).to_have_count(POINTS - 2 * PAGE)
    assert rows(page) == descending[2 * PAGE :]
    # A live refresh (a change of the sweep's jobs) keeps the page and the sort.
    page.evaluate("() => { window.before = document.querySelector('#sweep-live table'); }")
    page.evaluate("() => htmx.trigger(document.body, 'refresh')")
    page.wait_for_function("() => document.querySelector('#sweep-live table') !== window.before")
    assert rows(page) == descending[2 * PAGE :]
    page.locator('a[data-page="first"]').first.click()
    expect(page.locator("tr.point").first).to_have_attribute("data-index", str(descending[0]))
    page.close()


def test_a_dot_of_the_big_plot_shows_its_point_and_links_to_its_job(
    board: Board, expect: Any
) -> None:
    best = board.herd.client.get(f"/sweeps/{NAME}", sort="-acc")["rows"][0]
    page = board.page(f"/sweeps/{NAME}")
    # Where the best point's dot is on the screen (the top of the plot: no dot hides it), and
    # a corner of the plot's frame, where no dot is (they are inset).
    where, corner = page.evaluate(
        """(job) => {
            const svg = document.querySelector("svg.plot");
            const data = JSON.parse(svg.dataset.dots);
            const dot = data.dots.find((d) => d[2] === job);
            const frame = svg.querySelector("rect.frame");
            const points = [
                [data.kinds[dot[0]][0], dot[1]],
                [frame.x.baseVal.value + 2, frame.y.baseVal.value + 2],
            ];
            return points.map(([x, y]) => {
                const at = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
                return [at.x, at.y];
            });
        }""",
        best["job_id"],
    )
    # The dot is drawn there (its colour's marker at its path's vertex), not the background.
    assert colour(page, where) != colour(page, corner)
    page.mouse.move(where[0] - 20, where[1] + 20)  # beside it: nothing shown
    expect(page.locator(".plot-tip")).to_be_hidden()
    page.mouse.move(*where)
    tip = page.locator(".plot-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text(f"acc = {best['metrics']['acc']:.4g}")
    expect(tip).to_contain_text(f"(succeeded, job {best['job_id']})")
    link = page.locator("svg.plot a.pt-link")
    expect(link).to_have_attribute("href", f"/jobs/{best['job_id']}")
    page.mouse.click(*where)
    page.wait_for_url(f"**/jobs/{best['job_id']}")
    expect(page.locator("h1")).to_contain_text(f"Job {best['job_id']}")
    page.close()
