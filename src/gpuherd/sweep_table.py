"""A sweep's results table: every point with its state, run time and metrics; the listing.

The points are those of the sweep's latest spec; a point's state is its latest job's, or,
for a point no job in the database ran (or whose latest job ended without starting: its
last run moved to previous-runs/, _last_run), "done" / "failed" from the markers in its
folder, else from the exit a run herd.db does not know recorded there (unknown_ended.py),
"missing" without any. A point whose folder such a run writes in now (`runs`: sweep_unwatched.py) is
running, its job that run's, unless its latest job is waiting or running. A point's
parameters are those it ran with (its params.json), else the spec's. Jobs of the sweep
whose folder is no point of the latest spec (an earlier grid) are kept apart (`outside`,
with `in_spec` false and no `index`): not counted, not in `rows`.

NaN and the infinities (a metrics.json may hold them) sort as numbers, NaN last both ways,
and leave as the text "nan", "inf" and "-inf": the answer is standard JSON.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gpuherd.core.run_time import paused_until, pauses
from gpuherd.core.states import ACTIVE_STATES, POINT_STATES, JobState
from gpuherd.core.sweep import Point, SweepSpec, no_such_sweep
from gpuherd.core.sweep_values import json_safe
from gpuherd.errors import InvalidValue, NotFound
from gpuherd.same_command import same_command
from gpuherd.store import Store, SweepRow
from gpuherd.sweep_files import (
    METRICS_FILE,
    PARAMS_FILE,
    marker,
    moved_run,
    points_there,
    read_json,
    read_metrics,
)
from gpuherd.sweep_sort import sort_rows
from gpuherd.sweep_specs import expand_points, stored_spec
from gpuherd.sweep_unwatched import FolderRun, runs_under, shown_running
from gpuherd.unknown_ended import ended_run, shown_ended

if TYPE_CHECKING:
    from gpuherd.sweep_reads import SweepReads

__all__ = ["METRICS_FILE", "PARAMS_FILE", "listing", "read_json", "sort_rows", "table"]

_ACTIVE = {state.value for state in ACTIVE_STATES}
_SAID = "_said"
"""A row's key, until the table gathers it: the line that says why it is shown running."""

Runs = Mapping[str, FolderRun]
"""Runs no job of the queue watches, by their job's folder (sweep_unwatched.folder_runs)."""


def listing(store: Store | SweepReads, runs: Runs | None = None) -> list[dict[str, Any]]:
    """Every sweep with its points counted by state (`sweep ls`)."""
    out = []
    for row in store.list_sweeps():
        spec = stored_spec(row)
        points, outside = _rows(store, row, spec, metrics=False, unwatched=runs)
        out.append(
            {
                "name": row.name,
                "results_dir": row.results_dir,
                "points": len(points),
                "counts": dict(Counter(r["state"] for r in points)),
                "outside": dict(Counter(r["state"] for r in outside)),
                "samples": spec.samples,  # (then `outside` are points not drawn)
                "created_at": row.created_at,
                "updated_at": row.updated_at,
            }
        )
    return out


def table(
    store: Store | SweepReads,
    name: str,
    sort: str | None = None,
    states: Sequence[str] = (),
    limit: int | None = None,
    runs: Runs | None = None,
) -> dict[str, Any]:
    """Every point of the sweep: params, state, times and metrics (`sweep status`); with
    `states`, only the points (and runs outside the grid) in one of them, and with `limit`,
    the first `limit` of each after sorting. The counts are always the whole sweep's.
    `warnings`: the rows judged by runs no job of the queue watches, whichever are kept."""
    unknown = [s for s in states if s.lower() not in POINT_STATES]
    if unknown:
        raise InvalidValue(f"unknown state '{unknown[0]}': use one of {', '.join(POINT_STATES)}")
    states = [s.lower() for s in states]  # any case, as `sweep status --state` takes it
    row = store.get_sweep(name)
    if row is None:
        raise NotFound(no_such_sweep(name, store.sweep_names()))
    spec = stored_spec(row)
    rows, outside = _rows(store, row, spec, metrics=True, unwatched=runs)
    every = rows + outside
    warnings = [r.pop(_SAID) for r in every if _SAID in r] + shown_ended(rows)
    _read_params(row for row in every if row["metrics"])  # (_echoes compares them)
    metric_keys = [
        k
        for k in dict.fromkeys(k for r in every for k in r["metrics"])
        if k not in spec.varying or not _echoes(every, k)
    ]
    if sort:
        _read_params(every)  # (a sort may go by a parameter, of any row)
        rows = sort_rows(rows, sort, spec.varying, metric_keys, outside)
        outside = sort_rows(outside, sort, spec.varying, metric_keys, rows)
    counts = Counter(r["state"] for r in rows)
    if states:
        rows = [r for r in rows if r["state"] in states]
        outside = [r for r in outside if r["state"] in states]
    matched, outside_matched = len(rows), len(outside)
    rows, outside = rows[:limit], outside[:limit]
    _read_params([*rows, *outside])
    return {
        "name": row.name,
        "results_dir": row.results_dir,
        "results_gone": not os.path.isdir(row.results_dir),  # (moved: its rows still say done)
        "command": spec.command,
        "seed": spec.seed,  # what --samples and --shuffle drew with (the CLI's dry run too)
        "samples": spec.samples,  # (then the runs `outside` are of points not drawn)
        "varying": list(spec.varying),
        "metric_keys": metric_keys,
        "counts": dict(counts),
        "matched": matched,  # the points --state keeps (all without it), before --limit
        "outside_matched": outside_matched,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "rows": [_safe(r) for r in rows],
        "outside": [_safe(r) for r in outside],
        "warnings": warnings,
    }


def _safe(row: dict[str, Any]) -> dict[str, Any]:
    """The row as standard JSON. Only what a job or a file wrote may hold NaN: the rest are
    the daemon's own numbers (run times, ids), and 5,000 rows are quicker left as they are.
    Copies too: the values read from the folders are kept (sweep_files) and must not change."""
    return {**row, "params": json_safe(row["params"]), "metrics": json_safe(row["metrics"])}


def _echoes(rows: list[dict[str, Any]], key: str) -> bool:
    """Whether a metric only repeats the point's parameter of that name (a config dumped
    into metrics.json): a varying one has its column already."""
    found = [r for r in rows if key in r["metrics"]]
    return all(key in r["params"] and r["metrics"][key] == r["params"][key] for r in found)


_Rows = list[dict[str, Any]]


def _rows(
    store: Store | SweepReads,
    row: SweepRow,
    spec: SweepSpec,
    metrics: bool,
    unwatched: Runs | None = None,
) -> tuple[_Rows, _Rows]:
    """The rows of the spec's points, and those of the sweep's jobs outside it. With
    `metrics`, each folder's metrics.json is read too, and its params.json is left for
    _read_params, for the rows that need it: a table of 40,000 points with `--limit 1`
    read 40,000 of them for one row, a fifth of its time. `unwatched`: see Runs (only those
    in the sweep's folders are looked up: none, most often)."""
    latest: dict[str, _Run] = {}
    runs, now = store.sweep_runs(row.name), time.time()
    paused = store.pause_events([r[0] for r in runs if r[3] is not None])
    for job_id, folder, state, started, ended, attempt in runs:
        # Its time paused is no time run, as `ls` shows it (core/run_time.py); none for the
        # many never paused (0.0, as pauses() of none: a tenth of 40,000 points' table).
        events = paused.get(job_id)
        so_far = pauses(events, started or 0.0, ended) if events else (0.0, None)
        paused_for = paused_until(ended or now, *so_far)
        unstarted = attempt == 0 and state not in _ACTIVE
        latest[folder] = _Run(job_id, state, started, ended, paused_for, unstarted)
    specified = expand_points(spec)
    # A point no job ran is judged by its folder, looked into only where one may be (one
    # listing, as sweep_plan's): 40,000 points of which few ran cost ~5 failed lookups each.
    there = {p.run_dir for p in points_there([p for p in specified if p.run_dir not in latest])}
    points = [
        _point_row(p, latest.pop(p.run_dir, None), now, metrics, p.run_dir in there)
        for p in specified
    ]
    outside = [_extra_row(folder, job, now, metrics) for folder, job in latest.items()]
    peaks = store.sweep_peaks(row.name)
    for point in points + outside:
        point["peak_mem"] = peaks.get(point["job_id"]) if point["job_id"] else None
    if unwatched and (ours := runs_under(row.results_dir, unwatched)):
        for point in points + outside:
            if (run := ours.get(point["run_dir"])) and point["state"] not in _ACTIVE:
                point.pop("unknown_run", None)  # (an earlier run's end: not the point's now)
                point.update(_running(run, now), **{_SAID: shown_running(point["folder"], run)})
    return points, outside


# ---- rows of the table ----------------------------------------------------------------------


class _Run(NamedTuple):
    """What the table shows of a point's latest job."""

    id: int
    state: str
    started_at: float | None
    ended_at: float | None
    paused: float
    """Seconds it has spent paused (its time does not count them)."""
    ended_unstarted: bool
    """It ended without ever starting (cancelled while queued or held): the point is judged
    by its folder's last run, if any (_point_row)."""


def _point_row(
    point: Point, job: _Run | None, now: float, metrics: bool, there: bool
) -> dict[str, Any]:
    there = there or job is not None  # (else nothing to read: no folder, no job)
    metrics = metrics and there
    ran_in, said = point.run_dir, None
    if job is not None and _run_over(point.run_dir, job):
        job = None  # (judged by its folder, as a point whose jobs were all removed)
    if there and (job is None or job.ended_unstarted):
        ran_in, said = _last_run(point.run_dir)
        if job is not None and said == "missing":
            ran_in, said = point.run_dir, None  # (no run to judge by: its job's end says)
        else:
            job = None
    row = {
        "index": point.index,
        "folder": point.folder,
        "run_dir": point.run_dir,
        "params": dict(point.params),  # (its params.json's, once read: _read_params)
        "other_command": None,
        "in_spec": True,
        **_run_facts(ran_in, job, now, there, said),
        **(read_metrics(ran_in) if metrics else {"metrics": {}}),
    }
    if metrics:
        row[_UNREAD] = (point, ran_in)
    return row


def _run_over(run_dir: str, job: _Run) -> bool:
    """Whether the point's folder holds a later run's success than its latest job in the
    queue, one that did not succeed: a resubmission moved that job's run to
    previous-runs/<n>/, and its own job was removed since (`gpuherd clean --state
    succeeded`). The point was judged by the older job: `failed` beside the rerun's metrics,
    `sweep wait` exiting 1, where its next submission skipped it as done. One or two lookups
    of the points whose job ended without success alone (`sweep ls` reads every sweep's
    table: a succeeded job's folder is not looked into)."""
    if job.state == JobState.SUCCEEDED or job.state in _ACTIVE or job.ended_unstarted:
        return False
    return marker(run_dir) == "done"


def _last_run(run_dir: str) -> tuple[str, str]:
    """The folder of the point's last run and what its marker says: its own folder's, or,
    where a submission moved that run aside and the job it made never started (removed, or
    cancelled while queued or held: `--force`, then `gpuherd kill`), the one it was moved to
    (moved_run), as the next submission judges it (sweep_plan). Before, a job cancelled so
    was the point's state: `sweep status` said `cancelled`, without the run's metrics, and
    `sweep wait` failed, where the docs said the sweep was left as it was."""
    said = marker(run_dir)
    if said == "missing" and (moved := moved_run(run_dir)):
        return moved, marker(moved)
    return run_dir, said


_UNREAD = "_params_unread"
"""A row's key while its folder's params.json is not read: its point (None: outside the
grid) and the folder its run is in. Gone once read, and from every row the table answers."""


def _read_params(rows: Iterable[dict[str, Any]]) -> None:
    """Each row's `params` and `other_command` from its folder's params.json, where not read
    yet. The parameters the point's latest submission gave it: a done point skipped by a
    resubmission that changed `fixed` ran with these, not with the spec's. Its results came
    from another command than the sweep's now (a template changed, or another sweep or task
    sharing the results folder): `other_command` says which."""
    for row in rows:
        if _UNREAD not in row:
            continue
        point, ran_in = row.pop(_UNREAD)
        recorded = _recorded(ran_in)
        ran, command = recorded.get("params"), recorded.get("command")
        if isinstance(ran, dict):
            row["params"] = ran
        if point is not None:
            row["other_command"] = command if _other(command, point.command) else None


def _recorded(run_dir: str) -> dict[str, Any]:
    recorded = read_json(os.path.join(run_dir, PARAMS_FILE))
    return recorded if isinstance(recorded, dict) else {}


def _other(ran: Any, command: str | None) -> bool:
    """Whether params.json names another command than the point's (one it does not name, or
    an older gpuherd's without one, is not known to differ)."""
    return isinstance(ran, str) and command is not None and not same_command(ran, command)


def _extra_row(run_dir: str, job: _Run, now: float, metrics: bool) -> dict[str, Any]:
    row = {
        # No index: the one it had (params.json) is of an earlier grid, where it may now be
        # another point's; a row of the points has each index once.
        "index": None,
        "folder": os.path.basename(run_dir),
        "run_dir": run_dir,
        "params": {},  # (its params.json's, once read: _read_params)
        "other_command": None,  # outside the grid: no command of the sweep's to differ from
        "in_spec": False,
        **_run_facts(run_dir, job, now),
        **(read_metrics(run_dir) if metrics else {"metrics": {}}),
    }
    if metrics:
        row[_UNREAD] = (None, run_dir)
    return row


def _run_facts(
    run_dir: str, job: _Run | None, now: float, there: bool = True, said: str | None = None
) -> dict[str, Any]:
    """State, job id and times: from the latest job, else from the folder's markers (`said`,
    when looked for already; `there`: whether the folder may be there; else `missing`,
    nothing looked up)."""
    if job is not None:
        state = job.state
        started, ended, paused = job.started_at, job.ended_at, job.paused
        if state in (JobState.QUEUED, JobState.HELD):
            started = ended = None
    else:
        state = said or (marker(run_dir) if there else "missing")
        if state == "missing" and there and (ran := ended_run(run_dir)) is not None:
            facts = _run_facts_of(ran.state, None, ran.started_at, ran.ended_at, 0.0, now)
            return {**facts, "unknown_run": ran.view()}
        recorded = read_json(os.path.join(run_dir, "job.json")) if state != "missing" else {}
        if not isinstance(recorded, dict):
            recorded = {}
        started, ended = _number(recorded.get("started_at")), _number(recorded.get("ended_at"))
        paused = 0.0  # (a folder's job.json does not say: a job no longer in the queue)
    return _run_facts_of(state, job.id if job else None, started, ended, paused, now)


def _run_facts_of(
    state: str,
    job_id: int | None,
    started: float | None,
    ended: float | None,
    paused: float,
    now: float,
) -> dict[str, Any]:
    seconds = None
    if started is not None:
        seconds = max(0.0, (ended if ended is not None else now) - started - paused)
    return {
        "state": state,
        "job_id": job_id,
        "started_at": started,
        "ended_at": ended,
        "seconds": seconds,
    }


def _running(run: FolderRun, now: float) -> dict[str, Any]:
    """A point's facts while a run no job of the queue watches writes in its folder."""
    started = run.started_at
    return {
        "state": "running",
        "job_id": run.job_id,
        "started_at": started,
        "ended_at": None,
        "seconds": None if started is None else max(0.0, now - started),
        "peak_mem": None,  # (the queue's job of the point ran earlier: its peak is not this)
    }


# ---- helpers --------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def submission_of(row: SweepRow) -> Mapping[str, Any]:
    """What the latest submission of a sweep asked for besides the spec (cwd, options, git)."""
    value = row.spec.get("submission")
    return value if isinstance(value, dict) else {}
