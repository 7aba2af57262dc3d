"""How a sweep's results table sorts its rows (`sweep status --sort`, the sweep page's
headers): by a metric, a parameter or a field, numbers before text, NaN and the rows without
the key last both ways (sweep_table.py, sweep_unwatched.py).

A key names the column headed so: the table's own first (`state`, `seconds`, `TIME`, `job`:
its field), then a parameter's, then a metric's (a metric named as a parameter is headed
`NAME (metric)`), then any parameter of a point. `metric:NAME` and `param:NAME` (or the header
`NAME (metric)`) name a metric or a parameter whatever its name (`metric:state`,
`metric:-acc`); `-` before any key sorts descending. Before, a metric or parameter came
first: one named `seconds` (or `state`, `job_id`, `index`) took over the sort of the table's
own column, on the page and in `--sort time`, and a point without it sorted by the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuherd.core.sweep_values import metric_text
from gpuherd.errors import InvalidValue

_FIELDS = ("index", "folder", "state", "seconds", "job_id", "started_at", "ended_at", "peak_mem")
# The table's own headers, as a user copies them into --sort (`--sort -TIME`, `--sort job`):
# the fields they show.
_HEADERS = {"job": "job_id", "time": "seconds", "peak": "peak_mem"}
KINDS = ("metric", "param")
"""A key's words that name a metric or a parameter alone: `metric:NAME`, or `NAME (metric)`
as the table heads one named as another column."""


@dataclass(frozen=True)
class Columns:
    """What a sweep's table can be sorted by besides its own columns: the varying parameters
    (each a column), the metrics (each a column), every parameter of a point."""

    varying: Sequence[str]
    metric_keys: Sequence[str]
    params: Sequence[str]

    def source(self, name: str) -> tuple[str, str] | None:
        """("field" | "metric" | "param", its name there) of a key without its `-`: the
        column headed `name` (the table's own first, then a parameter's, then a metric's,
        then any parameter of a point), else a metric or parameter named with its kind."""
        if (field := own_column(name)) is not None:
            return "field", field
        for kind, names in (("param", self.varying), ("metric", self.metric_keys)):
            if name in names:
                return kind, name
        if name in self.params:
            return "param", name
        kind, sep, rest = name.partition(":")
        said = re.fullmatch(r"(.*) \((metric|param)\)", name, re.S)
        if said:  # as the table heads it
            kind, sep, rest = said[2], ":", said[1]
        named = self.metric_keys if kind == "metric" else self.params
        if sep and kind in KINDS and rest in named:
            return kind, rest
        return None

    def sort_key(self, kind: str, name: str) -> str:
        """The key that sorts by the metric or parameter (`kind`) `name`: the name itself
        where it reads as that column, else `kind:name` (`metric:state`, `metric:-acc`)."""
        plain = name == name.strip() and _direction(name)[1] == name
        return name if plain and self.source(name) == (kind, name) else f"{kind}:{name}"

    def label(self, kind: str, name: str) -> str:
        """Its header: `NAME (metric)` where the name alone heads another column (the table's
        own, or a parameter's), as `sweep status` labels it; the name alone else."""
        heads = self.source(name)
        return name if heads is None or heads == (kind, name) else f"{name} ({kind})"


def own_column(name: str) -> str | None:
    """The field of the table's own that `name` sorts by, as a field or a header is typed in
    any case (`TIME`, `Job-Id`, `peak mem`); None for any other name."""
    folded = name.strip().lower().replace("-", "_").replace(" ", "_")
    return _HEADERS.get(folded, folded if folded in _FIELDS else None)


def _direction(key: str) -> tuple[bool, str]:
    """(descending, the key without its `-` or `+`)."""
    return key.startswith("-"), key.lstrip("-+")


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
    descending, name = _direction(key)
    params = list(dict.fromkeys([*varying, *(k for r in [*rows, *others] for k in r["params"])]))
    columns = Columns(varying, metric_keys, params)
    found = columns.source(name)
    if found is None:
        # Each by the key that sorts by it (`metric:state` where `state` is the column's).
        keys = {kind: [columns.sort_key(kind, k) for k in names]
                for kind, names in (("metric", metric_keys), ("param", params))}  # fmt: skip
        # With no metric at all, "use a metric (none yet)" left the user guessing why none.
        metrics = (
            f"use a metric ({', '.join(keys['metric'])}),"
            if metric_keys
            else f"{_none_read(rows)}; use"
        )
        raise InvalidValue(
            f"cannot sort by {name!r}: {metrics} a parameter ({', '.join(keys['param']) or 'none'})"
            f" or one of {', '.join(_FIELDS)}; prefix - for descending"
        )
    keyed = [(_sort_key(_value(row, *found)), row) for row in rows]
    present = [(k, row) for k, row in keyed if k is not None and k != _NAN]
    last = [row for k, row in keyed if k == _NAN] + [row for k, row in keyed if k is None]
    # Descending reverses the order within numbers and within text, not which comes first:
    # numbers before text both ways (one sort on the whole key would put text first).
    present.sort(key=lambda pair: pair[0], reverse=descending)
    present.sort(key=lambda pair: pair[0][0])  # stable: the order within each class stays
    return [row for _, row in present] + last


_NAN = (2, "")


def _none_read(rows: Sequence[dict[str, Any]]) -> str:
    """Why no metric sorts: none written yet, or those written not read (too large, not
    JSON: said as `sweep status` says it), where "no point's metrics.json holds a metric"
    sent the user to look at files that held them."""
    unread = [row["metrics_error"] for row in rows if row.get("metrics_error")]
    if not unread:
        return "no point's metrics.json holds a metric yet"
    points = "1 point's" if len(unread) == 1 else f"{len(unread):,} points'"
    return f"no metric was read: {points} metrics.json could not be ({unread[0]})"


def _value(row: dict[str, Any], source: str, name: str) -> Any:
    """The row's value of `name` in `source` alone: a point without the metric sorts last,
    where it took the field of that name (`index`: first)."""
    values = row if source == "field" else row["metrics" if source == "metric" else "params"]
    return values.get(name)


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
    if isinstance(value, int) and not isinstance(value, bool):
        # As is, not float(): Python compares an int with a float exactly, so an int of 400
        # digits (too large for a float) sorts above every float but below inf, not tied with it.
        return (0, value)
    if isinstance(value, float):
        return _NAN if math.isnan(value) else (0, value)
    return (1, metric_text(value))
