"""What a sweep's submission says besides its counts, from the points' folders: done points
that ran with other values than the spec gives them now (a changed `fixed`). The daemon adds
it to a submission's warnings (sweeps.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuherd.core.sweep import Point, value_text
from gpuherd.sweep_table import PARAMS_FILE, read_json


def changed_values(skipped_done: Sequence[Point]) -> list[str]:
    """One warning for the done points, skipped, whose params.json holds other values than
    the spec's now: the folder name holds the varying values, so a `fixed` one changed."""
    changes: dict[str, str] = {}
    changed = 0
    for point in skipped_done:
        recorded = read_json(Path(point.run_dir) / PARAMS_FILE)
        ran = recorded.get("params") if isinstance(recorded, dict) else None
        if not isinstance(ran, dict):
            continue  # a folder copied from elsewhere, or a params.json the job rewrote
        differ = {
            key: f"{_shown(ran, key)} -> {_shown(point.params, key)}"
            for key in dict.fromkeys([*ran, *point.params])
            if _shown(ran, key) != _shown(point.params, key)
        }
        changed += bool(differ)
        changes = {**differ, **changes}  # each key as the first point showed it
    if not changed:
        return []
    what = ", ".join(f"{key}: {change}" for key, change in changes.items())
    return [
        f"fixed values changed for {changed} finished point{'s' * (changed != 1)} ({what}):"
        " they are skipped and keep their results; --force runs them again"
    ]


def _shown(params: Any, key: str) -> str:
    return value_text(params[key]) if key in params else "(none)"
