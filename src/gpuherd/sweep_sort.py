"""How a sweep's results table sorts its rows (`sweep status --sort`): by a metric, a
parameter or a field, numbers before text, NaN and the rows without the key last both ways
(sweep_table.py, sweep_unwatched.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gpuherd.core.sweep_values import metric_text
from gpuherd.errors import InvalidValue

_FIELDS = ("index", "folder", "state", "seconds", "job_id", "started_at", "ended_at", "peak_mem")
# The table's own headers, as a user copies them into --sort (`--sort -TIME`, `--sort job`):
# the fields they show. A metric or parameter of that name keeps the name (checked first).
_HEADERS = {"job": "job_id", "time": "seconds", "peak": "peak_mem"}


def sort_rows(
    rows: list[dict[str, Any]],
    key: str,
    varying: Sequence[str],
    metric_keys: Sequence[str],
    others: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Rows by a metric, a parameter or a field (`-key`: descending): numbers (infinities
    too) before text; then NaN, then rows without the key, in both directions. `others`:
    rows whose parameters may be sorted by too (the runs outside the grid)."""
    descending = key.startswith("-")
    name = key.lstrip("-+")
    every = [*rows, *others]
    if name not in (*metric_keys, *varying) and not any(name in r["params"] for r in every):
        folded = name.strip().lower().replace("-", "_").replace(" ", "_")
        name = _HEADERS.get(folded, folded if folded in _FIELDS else name)
    if name not in (*metric_keys, *_FIELDS, *varying) and not any(
        name in r["params"] for r in every
    ):
        params = list(dict.fromkeys([*varying, *(k for r in every for k in r["params"])]))
        # With no metric at all, "use a metric (none yet)" left the user guessing why none.
        metrics = (
            f"use a metric ({', '.join(metric_keys)}),"
            if metric_keys
            else "no point's metrics.json holds a metric yet; use"
        )
        raise InvalidValue(
            f"cannot sort by {name!r}: {metrics} a parameter ({', '.join(params) or 'none'})"
            f" or one of {', '.join(_FIELDS)}; prefix - for descending"
        )
    keyed = [(_sort_key(_value(row, name)), row) for row in rows]
    present = [(k, row) for k, row in keyed if k is not None and k != _NAN]
    last = [row for k, row in keyed if k == _NAN] + [row for k, row in keyed if k is None]
    # Descending reverses the order within numbers and within text, not which comes first:
    # numbers before text both ways (one sort on the whole key would put text first).
    present.sort(key=lambda pair: pair[0], reverse=descending)
    present.sort(key=lambda pair: pair[0][0])  # stable: the order within each class stays
    return [row for _, row in present] + last


_NAN = (2, "")


def _value(row: dict[str, Any], name: str) -> Any:
    for source in (row["metrics"], row["params"], row):
        if name in source:
            return source[name]
    return None


def _sort_key(value: Any) -> tuple[int, Any] | None:
    """(0, number) or (1, text); _NAN for NaN; None for no value. A text that reads as a
    number sorts as that number: `-p lr $(seq 0.001 0.001 0.1)` keeps `0.010` as typed (text:
    it does not read back the same), which sorted after 0.099, among the text."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)  # ("inf", "-1e-3", "007" too)
        except ValueError:
            pass
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int of 400 digits
            number = math.inf if value > 0 else -math.inf  # (copysign converts it too)
        return _NAN if math.isnan(number) else (0, number)
    return (1, metric_text(value))
