"""A sort by a metric no point's metrics.json gave: "no point's metrics.json holds a metric
yet" was said also where every point had written one that could not be read (over the 1 MiB
the table reads, or not JSON), which sent the user to look at files that held the metric."""

from __future__ import annotations

from typing import Any

import pytest

from gpuherd.errors import InvalidValue
from gpuherd.sweep_sort import sort_rows


def row(x: int, error: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"params": {"x": x}, "metrics": {}, "state": "succeeded"}
    return {**found, "metrics_error": error} if error else found


def test_metrics_not_read_are_said_as_the_reason_none_sorts() -> None:
    big = "/r/x=1/metrics.json: 7.5 MiB, over the 1.0 MiB limit"
    with pytest.raises(InvalidValue) as refused:
        sort_rows([row(1, big), row(2, big), row(3)], "-acc", ["x"], [])
    assert str(refused.value).startswith(
        f"cannot sort by 'acc': no metric was read: 2 points' metrics.json could not be ({big});"
        " use a parameter (x)"
    )


def test_none_written_is_said_as_before() -> None:
    with pytest.raises(InvalidValue, match=r"no point's metrics.json holds a metric yet; use a"):
        sort_rows([row(1)], "acc", ["x"], [])
