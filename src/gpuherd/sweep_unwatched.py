"""Sweep points whose folder a run writes in that no job of the queue runs: herd.db was
restored from a backup taken before that run started (or moved aside), and the daemon's
start found the run going on, unwatched (engine_unwatched.py: its job unknown to herd.db;
engine_held_runs.py: a run its job was held for, the job cancelled or ended meanwhile).

Before, a resubmission of the sweep ran such a point again, as no job the queue knows ran
there: the run's files were moved to previous-runs/<n>/ while it wrote them, a new job
started in the same folder beside it, and when the old run ended its shell appended its
`exit 0` to the new job's `process` file (it writes by path): the new job's record was
corrupted. Such a point now counts as running: not submitted, --force or not (sweep_plan.py;
no later word of the user's makes a second run in one folder safe), and said so, with how
to end the run; `sweep status` shows it running, its job that run's.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuherd import sweep_table
from gpuherd.core.states import ACTIVE_STATES
from gpuherd.core.sweep import Point
from gpuherd.core.units import plural

if TYPE_CHECKING:
    from gpuherd.engine import Engine

SHOWN = 3
"""Points named in one warning; `gpuherd daemon status` lists every unknown run."""

_ACTIVE = {state.value for state in ACTIVE_STATES}


@dataclass(frozen=True)
class FolderRun:
    """A run found going on in a job's folder that is no job's watched attempt."""

    job_id: int
    attempt: int
    pid: int
    started_at: float | None
    state: str | None = None
    """Its job's state; None: herd.db does not know the job."""

    @property
    def who(self) -> str:
        return f"job {self.job_id} attempt {self.attempt} (pid {self.pid})"

    def what(self, short: bool = False) -> str:
        if self.state is not None:
            return f"its job {self.state}" if short else f"unwatched, its job {self.state}"
        return "unknown to herd.db" + ("" if short else " (restored from an older backup?)")


def folder_runs(engine: Engine) -> dict[str, FolderRun]:
    """Those runs by their job's folder (a sweep point's: the point's)."""
    runs = {
        folder: FolderRun(run.job_id, run.attempt, run.pid, run.started_at)
        for folder, run in engine.set_aside.unwatched.by_job_dir().items()
    }
    held = sorted(engine.attempts.held_runs.items())
    if held:  # (rare: read only when a restart found such runs)
        jobs = engine.store.get_jobs(sorted({key[0] for key, _ in held}))
        for (job_id, attempt), run in held:
            job = jobs.get(job_id)
            state = job.state.value if job is not None else "removed"
            found = FolderRun(job_id, attempt, run.pid, run.started_at, state)
            runs.setdefault(run.job_dir, found)
    return runs


def not_rerun(points: Sequence[Point], runs: Mapping[str, FolderRun], force: bool) -> list[str]:
    """The warning of a submission that left out `points` (Plan.unwatched) for the runs in
    their folders: which, why, and what to do (one line)."""
    if not points:
        return []
    forced = ", --force or not" if force else ""
    why = (
        "run again now, the new job would have that run's files moved aside under it, and the"
        " run's end written into the new job's record"
    )
    if len(points) == 1:
        point, run = points[0], runs[points[0].run_dir]
        listed = " (gpuherd daemon status lists it until then)" if run.state is None else ""
        return [
            f"point {point.folder} not submitted{forced}: {run.who} runs in its folder,"
            f" {run.what()}; {why}. Submit it again once that run has ended{listed}, or end it"
            f" first: kill -TERM -{run.pid}"
        ]
    named = "; ".join(
        f"{p.folder}: {runs[p.run_dir].who}, {runs[p.run_dir].what(short=True)}"
        for p in points[:SHOWN]
    )
    more = f"; {len(points) - SHOWN} more" if len(points) > SHOWN else ""
    return [
        f"{plural(len(points), 'point')} not submitted{forced}: runs gpuherd does not watch"
        f" write in their folders ({named}{more}); {why}. Submit them again once those runs"
        " have ended (gpuherd daemon status lists those herd.db does not know), or end them"
        " first (kill -TERM -PID: the run's process group)"
    ]


TableOf = Callable[[str | None, Sequence[str], int | None], dict[str, Any]]
"""sweep_table.table of one sweep, given its sort, states and limit."""


def with_runs(
    table: dict[str, Any],
    table_of: TableOf,
    asked: tuple[str | None, Sequence[str], int | None],
    runs: Mapping[str, FolderRun],
    now: float,
) -> dict[str, Any]:
    """`table` (table_of(*asked): sort, states, limit) with each point whose folder one of
    `runs` writes in, and whose latest job is not queued or running there, shown as running,
    its job that run's, and a warning that says so; `table` itself where there is none."""
    if not (ours := _under(table["results_dir"], runs)):
        return table
    sort, states, limit = asked
    # Every row, before --state and --limit: a point shown running may be one they keep.
    full = table_of(sort, (), None) if states or limit is not None else table
    if not (shown := _show_running(full, ours, now)):
        return table
    rows, outside = full["rows"], full["outside"]
    if sort:  # (again: a sort by state, or by time, puts the rows shown running elsewhere)
        varying, metric_keys = full["varying"], full["metric_keys"]
        rows, outside = (
            sweep_table.sort_rows(rows, sort, varying, metric_keys, outside),
            sweep_table.sort_rows(outside, sort, varying, metric_keys, rows),
        )
    counts = Counter(row["state"] for row in rows)
    # As sweep_table.table keeps them (it checked `states` already).
    kept = [state.lower() for state in states]
    if kept:
        rows = [row for row in rows if row["state"] in kept]
        outside = [row for row in outside if row["state"] in kept]
    warnings = [_shown_running(row["folder"], run) for row, run in shown]
    return {
        **full,
        "counts": dict(counts),
        "matched": len(rows),
        "outside_matched": len(outside),
        "rows": rows[:limit],
        "outside": outside[:limit],
        "warnings": [*table.get("warnings", []), *warnings],
    }


def listing_with_runs(
    listing: list[dict[str, Any]],
    table_of: Callable[[str], dict[str, Any]],
    runs: Mapping[str, FolderRun],
    now: float,
) -> list[dict[str, Any]]:
    """`sweep ls`'s `listing`, each sweep's points counted as `sweep status` counts them
    (with_runs): those of a sweep with such a run in its folders from its whole table
    (`table_of` its name), read only for it."""
    for item in listing:
        if ours := _under(item["results_dir"], runs):
            table = table_of(item["name"])
            if _show_running(table, ours, now):
                item["counts"] = dict(Counter(row["state"] for row in table["rows"]))
                item["outside"] = dict(Counter(row["state"] for row in table["outside"]))
    return listing


def _show_running(
    table: dict[str, Any], ours: Mapping[str, FolderRun], now: float
) -> list[tuple[dict[str, Any], FolderRun]]:
    """Show each row of `table` (all its rows) whose folder one of `ours` writes in, and
    whose latest job is not queued or running there, as running, its job that run's; those
    rows, with their runs."""
    shown = [
        (row, ours[row["run_dir"]])
        for row in (*table["rows"], *table["outside"])
        if row["run_dir"] in ours and row["state"] not in _ACTIVE
    ]
    for row, run in shown:
        started = run.started_at
        row.update(
            state="running",
            job_id=run.job_id,
            started_at=started,
            ended_at=None,
            seconds=None if started is None else max(0.0, now - started),
            peak_mem=None,  # (the queue's job of the point ran earlier: its peak is not this)
        )
    return shown


def _under(results_dir: str, runs: Mapping[str, FolderRun]) -> dict[str, FolderRun]:
    """Those of `runs` in a folder under `results_dir` (a sweep's points' folders)."""
    under = results_dir + os.sep
    return {folder: run for folder, run in runs.items() if folder.startswith(under)}


def _shown_running(folder: str, run: FolderRun) -> str:
    return (
        f"point {folder} is shown running: {run.who} runs in its folder, {run.what()}; no job"
        " of the queue runs it, and its end does not decide the point: once it has ended, a"
        " submission of the sweep runs the point again"
    )
