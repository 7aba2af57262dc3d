"""A browser QA pass's findings on what the dashboard counts and asks:

- a sweep plot's caption counting its points as "finished points" when it left some out (a
  metric of text, NaN or missing): `27 finished points` of 36 that all succeeded;
- the jobs table without the jobs' priorities, so *prio +* changed nothing a row showed;
- a `?project=` no job has showing an empty table, where `?sweep=` says there is no such sweep;
- a GPU's *remove* acting at once, where a job's asks first;
- *Retry all failed* asking without saying how many jobs it retries.

Pages over the daemon's Unix socket; what dashboard.js does (asking, the live refresh) in
Debian's chromium, as test_dashboard.py drives it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import Board, browser, expect, open_board
from test_dashboard_pages import call, run_sweep

from conftest import Herd, wait_for
from gpuherd.api import views
from gpuherd.api.views_plot import scatter

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py

WRITES = """import json, os, sys
x, run_dir = sys.argv[1], sys.argv[2]
said = {"1": 0.5, "2": 0.75, "3": "n/a", "4": float("nan"), "5": float("inf")}
if x == "7":
    sys.exit(3)  # failed, no metrics.json
metrics = {"val_acc": said[x]} if x in said else {"epochs": 3}
with open(os.path.join(run_dir, "metrics.json"), "w") as f:
    json.dump(metrics, f)
"""
"""A sweep point's program: x=1, 2 write a number, 3 text, 4 NaN, 5 infinity, 6 no val_acc,
and 7 fails without metrics."""


def _caption(body: str) -> str:
    found = re.search(r'<figcaption class="muted small">(.*?)</figcaption>', body, re.S)
    assert found, "no plot caption"
    return " ".join(html.unescape(found.group(1)).split())


def test_a_plots_caption_says_how_many_finished_points_it_leaves_out_and_why(
    daemon: Herd, tmp_path: Path
) -> None:
    (tmp_path / "writes.py").write_text(WRITES)
    run_sweep(
        daemon, tmp_path, "python3 writes.py {x} {run_dir}", "-p x 1 2 3 4 5 6 7 --gpus 0 --name qa"
    )

    def finished() -> bool:
        rows = daemon.client.get("/sweeps/qa")["rows"]
        return len(rows) == 7 and all(r["state"] in ("succeeded", "failed") for r in rows)

    wait_for(finished, timeout=30, what="the sweep's 7 points to end")
    page = call(daemon, "GET", "/sweeps/qa?metric=val_acc&param=x").body
    assert page.count('<circle class="pt') == 2
    # (it said "2 finished points": the 5 others, 1 of them failed, were not counted or said)
    assert _caption(page) == (
        "2 of 7 finished points have a number for val_acc; 5 not plotted (2 NaN or infinite,"
        " 2 missing, 1 text). Points link to their jobs."
    )


def test_a_caption_says_each_reason_and_counts_alike_at_any_size() -> None:
    def row(i: int, value: Any, state: str = "succeeded") -> dict[str, Any]:
        metrics = {} if value is None else {"acc": value}
        return {"index": i, "params": {"lr": i}, "metrics": metrics, "state": state}

    def caption(rows: list[dict[str, Any]]) -> str:
        plot = scatter(rows, "lr", "acc")
        text = views.environment().get_template("_plot.html").render(plot=plot)
        return _caption(text)

    # the lr-grid of the QA pass: 300 finished, 20 failed without metrics
    grid = [row(i, 0.5) for i in range(280)] + [row(i, None, "failed") for i in range(20)]
    assert caption(grid) == (
        "280 of 300 finished points have a number for acc; 20 not plotted (missing)."
        " Points link to their jobs."
    )
    # 36 points, all succeeded, 9 writing "n/a" (it said "27 finished points")
    texts = [row(i, 0.5 if i < 27 else "n/a") for i in range(36)]
    assert caption(texts).startswith(
        "27 of 36 finished points have a number for acc; 9 not plotted (text)."
    )
    # inf and nan, as numbers or as text, were dropped silently ("5 finished points" of 8)
    odd = [row(i, v) for i, v in enumerate([1, 2, 3, 4, 5, "nan", float("inf"), "-Infinity"])]
    assert caption(odd).startswith(
        "5 of 8 finished points have a number for acc; 3 not plotted (NaN or infinite)."
    )
    one = [row(0, 1.0), row(1, [1, 2]), row(2, 0.5, "running")]  # a running point: not counted
    assert caption(one).startswith(
        "1 of 2 finished points has a number for acc; 1 not plotted (not a number)."
    )
    assert caption([row(0, 1.0), row(1, 2.0)]).startswith("2 finished points.")


def _retry_button(body: str) -> str:
    found = re.search(r'<button class="btn small" id="retry-failed"[^>]*>[^<]*</button>', body)
    assert found, "no Retry all failed button"
    return html.unescape(found.group(0))


def test_retry_all_failed_asks_with_the_number_of_jobs_it_retries(daemon: Herd) -> None:
    mine = [daemon.submit("--project", "mine", "--gpus", "0", "--", "exit 3") for _ in range(2)]
    other = daemon.submit("--project", "other", "--gpus", "0", "--", "exit 3")
    ok = daemon.submit("--project", "mine", "--gpus", "0", "--", "true")
    for job_id in [*mine, other]:
        daemon.wait_state(job_id, "failed")
    daemon.wait_state(ok, "succeeded")
    every = _retry_button(call(daemon, "GET", "/jobs").body)
    assert 'data-confirm="Retry all 3 failed jobs?">Retry all failed<' in every
    # Under a filter (its states aside: the button retries the filter's failed jobs on every
    # page), the count of those; the live fragment says it too, as it refreshes.
    for path in (
        "/jobs?project=mine",
        "/jobs?project=mine&state=succeeded",
        "/ui/jobs?project=mine",
    ):
        button = _retry_button(call(daemon, "GET", path).body)
        assert (
            'data-confirm="Retry all 2 failed jobs of this filter, on every page?">'
            "Retry all failed (this filter)<"
        ) in button, path
    one = _retry_button(call(daemon, "GET", "/jobs?project=other").body)
    assert 'data-confirm="Retry the 1 failed job of this filter, on every page?"' in one
    none = _retry_button(call(daemon, "GET", "/jobs?q=nothing-like-this").body)
    assert "data-confirm" not in none  # nothing to retry: nothing to ask


def test_the_jobs_table_shows_priorities_where_a_job_has_one(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    project = ("--project", "prio-http")
    low = daemon.submit(*project, "--hold", "--gpus", "0", "--", "true")
    plain = call(daemon, "GET", "/ui/jobs?project=prio-http").body
    assert "col-prio" not in plain  # priorities all 0: the table keeps its room
    high = daemon.submit(*project, "--hold", "--priority", "9223372036854775807", "--", "true")
    page = call(daemon, "GET", "/ui/jobs?project=prio-http").body
    assert re.search(r'<th class="col-prio"[^>]*>Prio</th>', page)
    row = page.split(f'id="job-{high}"')[1].split("</tr>")[0]
    assert (
        '<td class="prio num" title="priority 9223372036854775807">9223372036854775807</td>'
    ) in row
    row = page.split(f'id="job-{low}"')[1].split("</tr>")[0]
    assert '<td class="prio num" title="priority 0">0</td>' in row


def test_a_project_no_job_has_is_said_naming_the_projects(daemon: Herd) -> None:
    empty = call(daemon, "GET", "/jobs?project=nope").body
    said = re.search(r'<div class="flash error" id="project-error">([^<]*)</div>', empty)
    assert said and html.unescape(said.group(1)) == "no project 'nope': there are no projects yet"
    daemon.submit("--project", "vision", "--hold", "--", "true")
    body = call(daemon, "GET", "/jobs?project=nope").body
    assert "no project &#39;nope&#39;: the only project is vision</div>" in body
    for name in ("nlp", "rl", "audio", "graphs", "speech"):
        daemon.submit("--project", name, "--hold", "--", "true")
    daemon.submit("--hold", "--", "true")  # no project
    body = call(daemon, "GET", "/jobs?project=nope").body
    said = re.search(r'<div class="flash error" id="project-error">([^<]*)</div>', body)
    assert said and html.unescape(said.group(1)) == (
        "no project 'nope': the projects are audio, graphs, nlp, rl, speech, …"
    )
    assert "No job matches this filter." in body
    # a project there is, whose jobs the other filters leave out: nothing to say
    assert 'id="project-error"' not in call(daemon, "GET", "/jobs?project=nlp&state=failed").body
    assert 'id="project-error"' not in call(daemon, "GET", "/jobs?project=nlp").body
    # the same words as a sweep of no sweep (views.none_named)
    sweep = call(daemon, "GET", "/jobs?sweep=nope").body
    assert "no sweep &#39;nope&#39;: there are no sweeps yet" in sweep


def test_a_gpus_remove_button_carries_its_question(shared_daemon: Herd) -> None:
    body = call(shared_daemon, "GET", "/gpus").body
    row = body.split('id="gpu-2"')[1].split("</tr>")[0]
    assert (
        'value="remove" data-confirm="Remove GPU 2? Jobs running on it go on, but none starts'
        " on it until it is added again (below), and a job that asks for more GPUs than are"
        ' left cannot run.">remove</button>'
    ) in row
    assert 'value="drain">drain</button>' in row  # draining is undone by enable: asked nothing


# ---- in chromium --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    with open_board(browser, tmp_path_factory.mktemp("qa331") / "home", "4") as b:
        yield b


def test_a_gpu_is_removed_only_when_confirmed(board: Board, expect: Any) -> None:
    def indices() -> list[int]:
        return [g["index"] for g in board.herd.client.get("/gpus")["gpus"]]

    declined: list[str] = []
    question = "Remove GPU 3? Jobs running on it go on, but none starts on it until"
    try:
        page = board.page("/gpus", declined)
        page.click("#gpu-3 button[value=remove]")
        wait_for(lambda: declined, what="the question")
        assert declined[0].startswith(question)
        page.click("#gpu-3 button[value=drain]")  # asks nothing: sent at once, after the "no"
        expect(page.locator("#flash")).to_contain_text("draining")
        assert indices() == [0, 1, 2, 3]
        page.close()
        confirmed: list[str] = []
        page = board.page("/gpus", confirmed, accept=True)
        page.click("#gpu-3 button[value=remove]")
        expect(page.locator("#flash")).to_contain_text("removed")
        assert confirmed and confirmed[0].startswith(question)
        assert indices() == [0, 1, 2]
        page.close()
    finally:  # the module's other tests have the 4 GPUs
        board.herd.cli("gpus", "add", "3")
        board.herd.cli("gpus", "enable", "3")


def test_retry_all_failed_asks_with_the_count_of_jobs_failed_since_the_page_opened(
    board: Board, expect: Any, tmp_path: Path
) -> None:
    herd, go = board.herd, tmp_path / "go"
    project = ("--project", "retry-live")
    fails = f"until [ -e {go} ]; do sleep 0.05; done; exit 3"
    jobs = [herd.submit(*project, "--gpus", "0", "--", fails) for _ in range(2)]
    asked: list[str] = []
    page = board.page("/jobs?project=retry-live", asked)
    expect(page.locator("#retry-failed")).not_to_have_attribute("data-confirm", re.compile("."))
    go.touch()  # both fail now: the open page's live refresh counts them
    for job_id in jobs:
        herd.wait_state(job_id, "failed")
    expect(page.locator("#retry-failed")).to_have_attribute(
        "data-confirm", "Retry all 2 failed jobs of this filter, on every page?"
    )
    page.click("#retry-failed")
    wait_for(lambda: asked, what="the question")
    assert asked == ["Retry all 2 failed jobs of this filter, on every page?"]
    assert all(herd.job(job_id)["attempt"] == 1 for job_id in jobs)  # declined: not retried
    page.close()


def test_prio_plus_shows_the_new_priority_in_its_row(board: Board, expect: Any) -> None:
    herd = board.herd
    held = herd.submit("--project", "prio-live", "--hold", "--", "true")
    page = board.page("/jobs?project=prio-live")
    expect(page.locator("th.col-prio")).to_have_count(0)
    page.click(f"#job-{held} .act-prio-up")
    expect(page.locator(f"#job-{held} td.prio")).to_have_text("1")
    expect(page.locator("th.col-prio")).to_be_visible()
    page.click(f"#job-{held} .act-prio-up")
    expect(page.locator(f"#job-{held} td.prio")).to_have_text("2")
    page.close()


@pytest.mark.parametrize("width", [700, 1024, 1280])
def test_a_crowded_page_with_priorities_fits_the_window(
    board: Board, expect: Any, width: int
) -> None:
    """A running job, one waiting for 3 free GPUs with a reason, a held one with the largest
    priority there is, a failed one: the Prio column within the table's budget."""
    herd, project = board.herd, ("--project", "prio-wide")
    if not herd.client.get("/jobs", project="prio-wide", all=True)["jobs"]:
        herd.submit(*project, "--gpus", "0", "--name", "broken", "--", "false")
        running = herd.submit(*project, "--gpus", "2", "--name", "train", "--", "sleep 120")
        herd.wait_state(running, "running")
        herd.submit(*project, "--gpus", "3", "--priority", "-3", "--name", "big", "--", "true")
        top = str(2**63 - 1)
        herd.submit(*project, "--hold", "--priority", top, "--name", "held", "--", "true")
    page = board.page("/jobs?project=prio-wide")
    page.set_viewport_size({"width": width, "height": 800})
    expect(page.locator("th.col-prio")).to_be_visible()
    box = page.locator(".table-scroll")
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), "the table scrolls sideways"
    width_now = page.evaluate("() => document.documentElement.scrollWidth")
    assert width_now <= width
    cut = page.locator("td.prio[title='priority 9223372036854775807']")
    assert cut.evaluate("c => c.getBoundingClientRect().right") <= width
    page.close()
