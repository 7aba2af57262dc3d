"""Whether a sweep's points succeeded, each by its row of `sweep status` (its latest job's
state, or, with no job left or one that ended without starting, its folder's marker:
sweep_table.py): the one rule of `gpuherd
sweep wait NAME` (`wait --sweep NAME`) and of Python's `Sweep.wait()` (pure).

A point's verdict is its latest job's, however long ago it ended: the CLI's wait judged only
the jobs unfinished when it began, so a point failed already was left out and `sweep wait X
&& ./analyse.sh` went on or not by timing, where `Sweep.wait()` said False. A point rerun
after a failure counts by its rerun (the latest job)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

WAITED_FOR = ("queued", "running", "paused")
"""The points a wait waits for. Not a held one: it waits for a release (or its --begin time),
and a wait for it looked hung (`gpuherd wait` leaves held jobs out unless named); it has not
succeeded either, so the verdict is no."""

SUCCEEDED = frozenset({"succeeded", "done"})
"""A point's states that count as success: `done` is a SUCCESS marker whose job is no longer in
the queue (`gpuherd clean`), which `sweep submit` skips as done too."""


def waited_for(rows: Iterable[Mapping[str, Any]]) -> list[int]:
    """The jobs of the points queued, running or paused: those whose end a wait waits for."""
    return [row["job_id"] for row in rows if row["job_id"] and row["state"] in WAITED_FOR]


def asked(rows: Iterable[Mapping[str, Any]]) -> list[int]:
    """The jobs of every point but a held one: a wait waits for those unfinished, and the
    daemon tells at once how the others ended."""
    return [row["job_id"] for row in rows if row["job_id"] and row["state"] != "held"]


def unsucceeded(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The points that did not succeed (held, missing and unfinished ones included)."""
    return [row for row in rows if row["state"] not in SUCCEEDED]


def ended_with(run: Mapping[str, Any]) -> str:
    """`exit 1`, `signal 9`: how a run herd.db does not know ended in a point's folder, from
    its `sweep status` row's `unknown_run` (unknown_ended.py), which judged the point."""
    code = run["exit_code"]
    return f"exit {code}" if code is not None else f"signal {run['signal']}"
