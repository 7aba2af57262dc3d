"""The results table of a sweep: sorting with NaN and infinities, points outside the current
grid, and hints that run as printed."""

from __future__ import annotations

import io
import math
import shlex
from typing import Any

import pytest

from gpuherd.cli import plain, sweep_render
from gpuherd.sweep_table import sort_rows


def row(name: str, metrics: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {"folder": name, "params": params, "metrics": metrics or {}, "state": "succeeded"}


def test_nan_sorts_last_both_ways_and_infinities_as_numbers() -> None:
    values = {"a": 0.9, "b": math.nan, "c": math.inf, "d": 0.1, "e": -math.inf, "f": 2}
    rows = [row(k, {"acc": v}) for k, v in values.items()] + [row("none")]
    up = [r["folder"] for r in sort_rows(rows, "acc", [], ["acc"])]
    down = [r["folder"] for r in sort_rows(rows, "-acc", [], ["acc"])]
    assert up == ["e", "d", "a", "f", "c", "b", "none"]
    assert down == ["c", "f", "a", "d", "e", "b", "none"]


def test_non_finite_numbers_given_as_text_sort_as_the_numbers_they_name() -> None:
    rows = [row(str(x), x=x) for x in (1, "nan", "inf", "-inf", "abc", 0.5)]
    assert [r["folder"] for r in sort_rows(rows, "x", ["x"], [])] == [
        "-inf",
        "0.5",
        "1",
        "inf",
        "abc",
        "nan",
    ]
    assert [r["folder"] for r in sort_rows(rows, "-x", ["x"], [])] == [
        "inf",
        "1",
        "0.5",
        "-inf",
        "abc",
        "nan",
    ]


def test_the_tables_headers_sort_by_the_fields_they_show() -> None:
    """`--sort -TIME`, `--sort JOB`, `--sort "PEAK MEM"` (the headers as the table prints
    them) were refused: `cannot sort by 'TIME'`, the field being `seconds`."""
    rows = [
        {**row(name), "seconds": s, "job_id": j, "peak_mem": m}
        for name, s, j, m in (("a", 5.0, 3, 100), ("b", 9.0, 1, None), ("c", 1.0, 2, 300))
    ]
    for key in ("-TIME", "-time", "-seconds"):
        assert [r["folder"] for r in sort_rows(rows, key, [], [])] == ["b", "a", "c"]
    for key in ("JOB", "job", "job_id", "Job-Id"):
        assert [r["folder"] for r in sort_rows(rows, key, [], [])] == ["b", "c", "a"]
    for key in ("-PEAK MEM", "-peak_mem", "-peak"):
        assert [r["folder"] for r in sort_rows(rows, key, [], [])] == ["c", "a", "b"]
    assert [r["folder"] for r in sort_rows(rows, "STATE", [], [])] == ["a", "b", "c"]


def test_a_header_sorts_by_its_column_and_a_metric_of_its_name_by_its_kind() -> None:
    """A metric `time` or a parameter `job` took over `--sort time` and `--sort job` (and on
    the page a metric `seconds` its *Run time* header): the header is the column's now, and
    `metric:NAME`, `param:NAME` or the label `NAME (metric)` name the others."""
    rows = [{**row(n, {"time": t}, job=j), "seconds": s, "job_id": i} for n, t, j, s, i in (
        ("a", 2, "z", 1.0, 1), ("b", 1, "y", 2.0, 2))]  # fmt: skip
    assert [r["folder"] for r in sort_rows(rows, "time", ["job"], ["time"])] == ["a", "b"]
    assert [r["folder"] for r in sort_rows(rows, "job", ["job"], ["time"])] == ["a", "b"]
    for key in ("metric:time", "time (metric)", "-metric:time"):
        order = [r["folder"] for r in sort_rows(rows, key, ["job"], ["time"])]
        assert order == (["a", "b"] if key.startswith("-") else ["b", "a"])
    assert [r["folder"] for r in sort_rows(rows, "param:job", ["job"], ["time"])] == ["b", "a"]
    with pytest.raises(Exception, match=r"^cannot sort by 'TIMES': .* peak_mem; prefix -"):
        sort_rows(rows, "TIMES", [], [])


def test_values_kept_as_text_that_read_as_numbers_sort_as_those_numbers() -> None:
    """`-p lr $(seq 0.001 0.001 0.1)` keeps 0.010 as text (it does not read back the same),
    and `--sort lr` put 0.010, 0.020, ... after 0.099."""
    values = ["0.009", "0.010", "0.011", "1e-3", "007", "+5", "abc"]
    rows = [row(v, lr=float(v) if v in ("0.009", "0.011") else v) for v in values]
    up = [r["folder"] for r in sort_rows(rows, "lr", ["lr"], [])]
    down = [r["folder"] for r in sort_rows(rows, "-lr", ["lr"], [])]
    assert up == ["1e-3", "0.009", "0.010", "0.011", "+5", "007", "abc"]
    assert down == ["007", "+5", "0.011", "0.010", "0.009", "1e-3", "abc"]


def test_numbers_sort_before_text_and_booleans_in_both_directions() -> None:
    values = {"t": True, "b": "beta", "one": 1, "f": False, "a": "alpha", "half": 0.5}
    values |= {"big": 10**400, "list": [1, 2], "none": None}
    rows = [row(k, {"m": v}) for k, v in values.items()] + [row("missing")]
    up = [r["folder"] for r in sort_rows(rows, "m", [], ["m"])]
    down = [r["folder"] for r in sort_rows(rows, "-m", [], ["m"])]
    # Text as the table shows it: [1, 2], alpha, beta, false, true (JSON text of the rest).
    assert up == ["half", "one", "big", "list", "a", "b", "f", "t", "none", "missing"]
    assert down == ["big", "one", "half", "t", "f", "b", "a", "list", "none", "missing"]


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("digits", "gpuherd sweep status digits"),
        ("-dash", "gpuherd sweep status -- -dash"),
        ("-a b", "gpuherd sweep status -- '-a b'"),
        ("a b", "gpuherd sweep status 'a b'"),
    ],
)
def test_the_results_hint_runs_as_printed(name: str, hint: str) -> None:
    answer = {"name": name, "points": 1, "results_dir": "/r", "ids": [1], "new": 1}
    answer |= {"rerun_failed": 0, "skipped_done": 0, "skipped_active": 0}
    last = sweep_render.summary(answer).splitlines()[-1]
    assert last == f"results: {hint}"
    assert shlex.split(hint)[-1] == name


def terminal() -> plain.Terminal:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = 200, False
    return term


def test_runs_outside_the_current_grid_are_listed_apart_and_not_counted() -> None:
    points = [row("x=1", x=1), row("x=2", x=2)]
    old = {**row("x=3", x=3), "state": "failed", "in_spec": False}
    table = {"name": "nar", "results_dir": "/r/nar", "varying": ["x"], "metric_keys": []}
    table |= {"counts": {"succeeded": 2}, "rows": points, "outside": [old]}
    for r in [*points, old]:
        r |= {"job_id": 1, "seconds": 1.0}
    term = terminal()
    sweep_render.status_table(table, term)
    assert isinstance(term.stream, io.StringIO)
    lines = term.stream.getvalue().splitlines()
    assert lines[3] == "sweep nar: 2 points (2 succeeded); /r/nar"
    assert lines[4] == "1 run not in the current grid (not counted): 1 failed"
    assert lines[5].split() == ["FOLDER", "x", "STATE", "JOB", "TIME"]
    assert lines[6].split() == ["x=3", "3", "failed", "1", "1.0s"]

    term = terminal()
    listed = {"name": "nar", "points": 2, "counts": {"succeeded": 2}, "results_dir": "/r"}
    sweep_render.sweep_list([{**listed, "outside": {"failed": 1}}], term)
    assert isinstance(term.stream, io.StringIO)
    assert term.stream.getvalue().splitlines()[1].split() == [
        "nar",
        "2",
        "2",
        "succeeded",
        "(+1",
        "not",
        "in",
        "the",
        "grid)",
        "/r",
    ]
