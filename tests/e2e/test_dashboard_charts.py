"""The dashboard's server-drawn charts and sweep figures, as pure functions (no daemon)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.datastructures import QueryParams

from gpuherd.api import views, views_plot, views_sweeps
from gpuherd.api.views_plot import nice_ticks, scatter, sparkline


def row(index: int, params: dict[str, Any], metrics: dict[str, Any], state: str = "succeeded"):
    return {
        "index": index,
        "params": params,
        "metrics": metrics,
        "state": state,
        "job_id": index + 1,
    }


def test_numbers_are_read_from_numbers_and_text() -> None:
    assert views_plot.number(3) == 3.0 and views_plot.number("1e-3") == 0.001
    for value in (True, None, "adam", float("nan"), "inf", [1]):
        assert views_plot.number(value) is None
    assert views_plot.label(0.30000000000000004) == "0.3" and views_plot.label(1e-5) == "1e-5"


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.13, 0.91) == [0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(-30, 70) == [-20.0, 0.0, 20.0, 40.0, 60.0]
    assert nice_ticks(5, 5) == [5]


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([0.1, 0.5, 0.9], "linear"),
        ([1, 10, 50], "linear"),  # under two decades
        ([1e-4, 1e-3, 1e-2], "log"),
        (["1e-4", "1e-3", "0.01"], "log"),  # text that reads as numbers
        ([-1, 1, 1000], "linear"),  # not all positive
        (["adam", "sgd", "adam"], "category"),
        ([1, "two"], "category"),
    ],
)
def test_the_parameter_axis(values: list[Any], kind: str) -> None:
    rows = [row(i, {"p": v}, {"m": i}) for i, v in enumerate(values)]
    plot = scatter(rows, "p", "m")
    assert plot is not None and plot.x.kind == kind
    assert len(plot.dots) == len(values)
    xs = [d.x for d in plot.dots]
    assert all(plot.left <= x <= plot.right for x in xs)
    if kind == "log":
        assert [t.text for t in plot.x.ticks] == ["0.0001", "0.001", "0.01"]
        assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.2)  # evenly, per decade
    if kind == "category":
        assert [t.text for t in plot.x.ticks] == list(dict.fromkeys(str(v) for v in values))


def test_only_finished_points_with_a_number_are_drawn() -> None:
    rows = [
        row(0, {"x": 1}, {"acc": 0.5}),
        row(1, {"x": 2}, {"acc": 0.7}, state="failed"),
        row(2, {"x": 3}, {"acc": 0.9}, state="running"),  # a metrics.json written mid-run
        row(3, {"x": 4}, {}, state="queued"),
        row(4, {"x": 5}, {"acc": "n/a"}),
    ]
    plot = scatter(rows, "x", "acc")
    assert plot is not None
    assert [d.ok for d in plot.dots] == [True, False]
    assert plot.dots[0].y > plot.dots[1].y  # higher values are higher up (smaller y)
    assert plot.dots[0].title == "x = 1, acc = 0.5 (succeeded, job 1)"
    assert scatter(rows[2:], "x", "acc") is None


def test_points_are_coloured_by_another_parameter() -> None:
    rows = [row(i, {"x": i % 3, "opt": ["adam", "sgd"][i % 2]}, {"m": i}) for i in range(6)]
    plot = scatter(rows, "x", "m", colour_by="opt")
    assert plot is not None and plot.legend == ["adam", "sgd"]
    assert [d.series for d in plot.dots] == [0, 1, 0, 1, 0, 1]
    many = [row(i, {"x": i, "seed": i}, {"m": i}) for i in range(12)]
    assert scatter(many, "x", "m", colour_by="seed").legend == []  # type: ignore[union-attr]


def test_a_big_plot_draws_a_vertex_per_dot_and_shares_its_tooltips_words() -> None:
    """Past LINKED dots: a path per colour, a vertex per dot (its marker drawn there), and
    plot.js's data, where the dots of one x, colour and state share their tooltips' words
    (a tooltip whole per dot was 786 KB of a 10,000-point sweep's page)."""
    opts = ["adam", "sgd"]
    rows = [row(i, {"x": i % 2, "opt": opts[i // 2 % 2]}, {"m": i / 7}) for i in range(400)]
    rows[5]["state"] = "failed"
    plot = scatter(rows, "x", "m", colour_by="opt")
    assert plot is not None and not plot.linked
    data = plot.data()
    assert len(data["kinds"]) == 5  # 2 x values x 2 colours, and the failed one
    tips, places = [], []
    for kind, y, job, value in data["dots"]:
        x, before, after = data["kinds"][kind]
        tips.append(before + value + after + f", job {job})")
        places.append((x, y))
    assert sorted(tips) == sorted(d.title for d in plot.dots)
    assert tips[-1] == "x = 1, m = 0.7143, opt = adam (failed, job 6)"  # drawn last, on top
    drawn = []
    for _, path in plot.paths():
        numbers = [float(n) for n in path.removeprefix("M").split()]
        drawn += list(zip(numbers[::2], numbers[1::2], strict=True))
    assert drawn == places  # every dot a vertex, in the order drawn


def test_the_plots_caption_counts_its_points_as_the_dashboard_writes_numbers() -> None:
    rows = [row(i, {"x": i % 7}, {"m": i}) for i in range(10_000)]
    plot = scatter(rows, "x", "m")
    caption = views.environment().get_template("_plot.html").render(plot=plot)
    assert "10,000 finished points." in caption


def test_a_sparkline_spans_the_last_minutes_and_breaks_at_gaps() -> None:
    now = 1000.0
    history = [[now - 40 + 2 * i, 50, 2**30] for i in range(20)]
    history[10][1] = None  # utilisation not reported at one reading
    spark = sparkline(history, 4 * 2**30, now, (50, 2**30))
    assert spark is not None and spark.minutes == 1
    assert len(spark.util) == 2 and len(spark.mem) == 1
    assert spark.util_now == 50 and spark.mem_now == 25
    # A GPU lost since its last reading: no utilisation nor memory now, whatever it read.
    lost = sparkline(history, 4 * 2**30, now, (None, None))
    assert lost is not None and (lost.util_now, lost.mem_now) == (None, None)
    assert lost.util == spark.util  # what it read while it was seen stays drawn
    first = [tuple(map(float, p.split(","))) for p in spark.util[0].split()]
    assert first[0][0] == pytest.approx(views_plot.SPARK_W * (1 - 40 / 60), abs=0.1)
    assert {y for _, y in first} == {1 + (views_plot.SPARK_H - 2) * 0.5}
    old = [[now - 3600 + 2 * i, 10, None] for i in range(3)] + history
    spark = sparkline(old, None, now, (50, None))
    assert spark is not None and spark.minutes == 10 and spark.mem == []
    assert sparkline([], 2**30, now, (None, None)) is None
    lone = sparkline([[now, 80, None]], None, now, (80, None))
    assert lone is not None and len(lone.util[0].split()) == 2  # drawn as a short dash


def test_point_counts_fold_into_groups() -> None:
    counts = {"succeeded": 3, "done": 1, "killed": 1, "held": 2, "paused": 1, "missing": 4}
    assert views_sweeps.group_counts(counts) == {
        "done": 4,
        "failed": 1,
        "running": 1,
        "queued": 2,
        "not run": 4,
    }


def test_sort_links_toggle_and_keep_the_plot_choice() -> None:
    q = views_sweeps.SweepQuery.from_query(QueryParams("sort=acc&metric=acc&param=lr"))
    assert q.sort_link("acc") == "sort=-acc&metric=acc&param=lr"
    assert q.sort_link("lr") == "sort=lr&metric=acc&param=lr"
    assert q.sorted_by("acc") == "asc" and q.sorted_by("lr") == ""
    assert views_sweeps.jobs_link("a b", "failed").startswith("/jobs?state=failed&state=killed")
    assert views_sweeps.jobs_link("a b").endswith("sweep=a+b")
