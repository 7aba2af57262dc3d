"""The line that says a sweep's metrics were not read for some points (pure): their
metrics.json too large, not JSON, not readable (sweep_files.read_metrics' `metrics_error`).
Without it the table's columns, or Python's rows, were just empty, with no reason given.
One wording for `sweep status` and `Sweep.results()`, each saying where every point's reason
is."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def unread_line(rows: Iterable[Mapping[str, Any]], each: str) -> str | None:
    """`metrics not read: REASON`, or for several `metrics not read for N points (EACH); the
    first: REASON` (`each`: where each point's is, `--json gives each its metrics_error`);
    None where every metrics.json was read (or none written)."""
    unread = [row["metrics_error"] for row in rows if row.get("metrics_error")]
    if not unread:
        return None
    if len(unread) == 1:
        return f"metrics not read: {unread[0]}"
    # ("(and 5 more)" said neither more what, nor where they were named)
    return f"metrics not read for {len(unread):,} points ({each}); the first: {unread[0]}"
