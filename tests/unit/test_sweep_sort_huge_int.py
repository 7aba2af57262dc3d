"""A metric of 311 digits (an int JSON allows, too large for a float) sorted as equal to
`inf`, interleaved with the `inf` rows in the order the points came: it sorts above every
float and below inf now, both ways."""

from __future__ import annotations

from typing import Any

from gpuherd.sweep_sort import sort_rows

HUGE = 10**310


def row(x: int, acc: Any) -> dict[str, Any]:
    return {"params": {"x": x}, "metrics": {"acc": acc}, "state": "succeeded"}


def test_an_int_too_large_for_a_float_sorts_between_the_floats_and_inf() -> None:
    rows = [row(1, float("inf")), row(2, HUGE), row(3, float("inf")), row(4, 1e308), row(5, -HUGE)]
    ascending = [r["params"]["x"] for r in sort_rows(rows, "acc", ["x"], ["acc"])]
    assert ascending == [5, 4, 2, 1, 3]
    descending = [r["params"]["x"] for r in sort_rows(rows, "-acc", ["x"], ["acc"])]
    assert descending == [1, 3, 2, 4, 5]  # (before: 1, 2, 3: the int tied with inf)
