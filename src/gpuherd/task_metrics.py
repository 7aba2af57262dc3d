"""What a task's return value puts in its metrics.json (worker.write_metrics): the entries
that fit the sweep table, the whole value staying in result.json (what `job.result()` reads).

The daemon reads a metrics.json of at most 1 MiB (sweep_files.JSON_MAX_BYTES) and leaves a
larger one unread. The worker wrote the whole return value there: a task returning its final
numbers with a curve (`{"acc": 0.9, "curve": [150,000 floats]}`) lost every metric of its
point in `sweep status` and `sweep.results()`, and `results("-acc")` said no point held
`acc`; the advice to keep curves in a file of their own was not the task author's to follow.

Standard library only: the worker imports this module before the user's code.
"""

from __future__ import annotations

import json
from typing import Any

METRIC_MAX_CHARS = 200
"""The longest value, written as JSON, metrics.json keeps (a number always fits): text, a
short list or dict (`[0.5, 0.9]`) are a table's cell; a curve, an array, a long text are not."""
METRICS_MAX_BYTES = 64 * 1024
"""The most of them, as JSON, metrics.json holds (then the dict's later entries are left out):
far under the daemon's 1 MiB, and small enough that the daemon keeps the file read
(sweep_files.KEEP_MAX_BYTES), not reading it again at each `sweep status`."""


def table_metrics(value: Any) -> dict[Any, Any]:
    """metrics.json for a return value made storable (task_values.Storable: its dict keys
    unique as text): of a dict, its entries that fit a cell (METRIC_MAX_CHARS), in its order, up to
    METRICS_MAX_BYTES; another value as `{"result": value}`, if it fits."""
    entries = value if isinstance(value, dict) else {"result": value}
    kept: dict[Any, Any] = {}
    size = 2  # ({})
    for key, item in entries.items():
        text = _cell(item)
        if text is None:
            continue
        size += len(json.dumps(str(key))) + len(text) + 4  # (`: ` and `, `)
        if size > METRICS_MAX_BYTES:
            break
        kept[key] = item  # (json.dumps writes it as result.json has it)
    return kept


def _cell(item: Any) -> str | None:
    """`item` as JSON if that fits a cell, else None (a long list is not written to know)."""
    if _size_past(item, METRIC_MAX_CHARS) > METRIC_MAX_CHARS:
        return None
    text = json.dumps(item)
    return text if len(text) <= METRIC_MAX_CHARS else None


def _size_past(item: Any, most: int) -> int:
    """At least as many characters as `item` takes as JSON, the count stopping once past
    `most` (each value takes one at least, text its length: no deeper than `most` either)."""
    if isinstance(item, str):
        return len(item)
    if not isinstance(item, list | dict):
        return 1
    count = 1
    for key, inner in item.items() if isinstance(item, dict) else enumerate(item):
        count += len(key) if isinstance(key, str) else 0
        count += _size_past(inner, most - count)
        if count > most:
            break
    return count
