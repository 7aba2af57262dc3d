"""A sweep's results table: every point with its state, run time and metrics; the listing.

The points are those of the sweep's latest spec; a point's state is its latest job's, or,
for a point no job in the database ran, "done" / "failed" from the markers in its folder
("missing" without either). A point's parameters are those it ran with (its params.json),
else the spec's. Jobs of the sweep whose folder is no point of the latest spec (an earlier
grid) are kept apart (`outside`, with `in_spec` false and no `index`): not counted, not in
`rows`.

NaN and the infinities (a metrics.json may hold them) sort as numbers, NaN last both ways,
and leave as the text "nan", "inf" and "-inf": the answer is standard JSON.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from gpuherd.core.run_time import paused_until, pauses
from gpuherd.core.states import POINT_STATES, JobState
from gpuherd.core.sweep import (
    Point,
    SweepError,
    SweepSpec,
    expand,
    no_such_sweep,
    spec_from_dict,
)
from gpuherd.core.sweep_values import json_safe, metric_text
from gpuherd.errors import HerdError, InvalidValue, NotFound
from gpuherd.same_command import same_command
from gpuherd.store import Store, SweepRow
from gpuherd.sweep_files import (
    METRICS_FILE,
    PARAMS_FILE,
    marker,
    read_json,
    read_metrics,
)

__all__ = ["METRICS_FILE", "PARAMS_FILE", "listing", "read_json", "sort_rows", "table"]

EXPANSIONS_KEPT = 8
"""Expanded specs kept (status and resubmission of a big sweep expand it each time)."""
_expansions: dict[str, tuple[Point, ...]] = {}
_expansions_lock = threading.Lock()


def listing(store: Store) -> list[dict[str, Any]]:
    """Every sweep with its points counted by state (`sweep ls`)."""
    out = []
    for row in store.list_sweeps():
        spec = stored_spec(row)
        points, outside = _rows(store, row, spec, metrics=False)
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
    store: Store,
    name: str,
    sort: str | None = None,
    states: Sequence[str] = (),
    limit: int | None = None,
) -> dict[str, Any]:
    """Every point of the sweep: params, state, times and metrics (`sweep status`); with
    `states`, only the points (and runs outside the grid) in one of them, and with `limit`,
    the first `limit` of each after sorting. The counts are always the whole sweep's."""
    unknown = [s for s in states if s.lower() not in POINT_STATES]
    if unknown:
        raise InvalidValue(f"unknown state '{unknown[0]}': use one of {', '.join(POINT_STATES)}")
    states = [s.lower() for s in states]  # any case, as `sweep status --state` takes it
    row = store.get_sweep(name)
    if row is None:
        raise NotFound(no_such_sweep(name, store.sweep_names()))
    spec = stored_spec(row)  # (once: checking the values of a 10,000-point spec takes ~10 ms)
    rows, outside = _rows(store, row, spec, metrics=True)
    every = rows + outside
    metric_keys = [
        k
        for k in dict.fromkeys(k for r in every for k in r["metrics"])
        if k not in spec.varying or not _echoes(every, k)
    ]
    if sort:
        rows = sort_rows(rows, sort, spec.varying, metric_keys, outside)
        outside = sort_rows(outside, sort, spec.varying, metric_keys, rows)
    counts = Counter(r["state"] for r in rows)
    if states:
        rows = [r for r in rows if r["state"] in states]
        outside = [r for r in outside if r["state"] in states]
    matched, outside_matched = len(rows), len(outside)
    rows, outside = rows[:limit], outside[:limit]
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


def _rows(store: Store, row: SweepRow, spec: SweepSpec, metrics: bool) -> tuple[_Rows, _Rows]:
    """The rows of the spec's points, and those of the sweep's jobs outside it. With
    `metrics`, the folders' files are read too (metrics.json, params.json)."""
    latest: dict[str, _Run] = {}
    runs, now = store.sweep_runs(row.name), time.time()
    paused = store.pause_events([r[0] for r in runs if r[3] is not None])
    for job_id, folder, state, started, ended in runs:
        # Its time paused is no time run, as `ls` shows it (core/run_time.py).
        so_far = pauses(paused.get(job_id, ()), started or 0.0, ended)
        latest[folder] = _Run(job_id, state, started, ended, paused_until(ended or now, *so_far))
    points = [_point_row(p, latest.pop(p.run_dir, None), now, metrics) for p in expand_points(spec)]
    outside = [_extra_row(folder, job, now, metrics) for folder, job in latest.items()]
    peaks = store.sweep_peaks(row.name)
    for point in points + outside:
        point["peak_mem"] = peaks.get(point["job_id"]) if point["job_id"] else None
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


def _point_row(point: Point, job: _Run | None, now: float, metrics: bool) -> dict[str, Any]:
    recorded = _recorded(point.run_dir) if metrics else {}
    ran, command = recorded.get("params"), recorded.get("command")
    return {
        "index": point.index,
        "folder": point.folder,
        "run_dir": point.run_dir,
        # The parameters the point's latest submission gave it: a done point skipped by a
        # resubmission that changed `fixed` ran with these, not with the spec's.
        "params": dict(point.params) if not isinstance(ran, dict) else ran,
        # Its results came from another command than the sweep's now (a template changed,
        # or another sweep or task sharing the results folder): say which.
        "other_command": command if _other(command, point.command) else None,
        "in_spec": True,
        **_run_facts(point.run_dir, job, now),
        **(read_metrics(point.run_dir) if metrics else {"metrics": {}}),
    }


def _recorded(run_dir: str) -> dict[str, Any]:
    recorded = read_json(os.path.join(run_dir, PARAMS_FILE))
    return recorded if isinstance(recorded, dict) else {}


def _other(ran: Any, command: str | None) -> bool:
    """Whether params.json names another command than the point's (one it does not name, or
    an older gpuherd's without one, is not known to differ)."""
    return isinstance(ran, str) and command is not None and not same_command(ran, command)


def _extra_row(run_dir: str, job: _Run, now: float, metrics: bool) -> dict[str, Any]:
    recorded = _recorded(run_dir) if metrics else {}
    params = recorded.get("params")
    return {
        # No index: the one it had (params.json) is of an earlier grid, where it may now be
        # another point's; a row of the points has each index once.
        "index": None,
        "folder": os.path.basename(run_dir),
        "run_dir": run_dir,
        "params": params if isinstance(params, dict) else {},
        "other_command": None,  # outside the grid: no command of the sweep's to differ from
        "in_spec": False,
        **_run_facts(run_dir, job, now),
        **(read_metrics(run_dir) if metrics else {"metrics": {}}),
    }


def _run_facts(run_dir: str, job: _Run | None, now: float) -> dict[str, Any]:
    """State, job id and times: from the latest job, else from the folder's markers."""
    if job is not None:
        state = job.state
        started, ended, paused = job.started_at, job.ended_at, job.paused
        if state in (JobState.QUEUED, JobState.HELD):
            started = ended = None
    else:
        state = marker(run_dir)
        recorded = read_json(os.path.join(run_dir, "job.json")) if state != "missing" else {}
        if not isinstance(recorded, dict):
            recorded = {}
        started, ended = _number(recorded.get("started_at")), _number(recorded.get("ended_at"))
        paused = 0.0  # (a folder's job.json does not say: a job no longer in the queue)
    seconds = None
    if started is not None:
        seconds = max(0.0, (ended if ended is not None else now) - started - paused)
    return {
        "state": state,
        "job_id": job.id if job else None,
        "started_at": started,
        "ended_at": ended,
        "seconds": seconds,
    }


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


# ---- helpers --------------------------------------------------------------------------------


def stored_spec(row: SweepRow) -> SweepSpec:
    data = {k: v for k, v in row.spec.items() if k != "submission"}
    try:
        return spec_from_dict(data)
    except SweepError as exc:
        raise HerdError(f"sweep {row.name!r}: its stored spec is invalid: {exc}") from None


def expand_points(spec: SweepSpec) -> list[Point]:
    """The spec's points; the last EXPANSIONS_KEPT specs' are kept, as the spec's repr (every
    field, 1, 1.0 and "1" told apart) says: `sweep status` expands the same spec each time,
    and 5,000 points took a fifth of a second. (Points are frozen; the list is a copy.)"""
    key = repr(spec)
    with _expansions_lock:  # (a submission expands on a worker thread, `status` on the loop)
        kept = _expansions.pop(key, None)
    if kept is None:
        kept = tuple(_expand(spec))
    with _expansions_lock:
        if len(_expansions) >= EXPANSIONS_KEPT:
            del _expansions[next(iter(_expansions))]  # the least recently used (dicts keep order)
        _expansions[key] = kept
    return list(kept)


def _expand(spec: SweepSpec) -> list[Point]:
    try:
        points = expand(spec)
    except SweepError as exc:
        raise InvalidValue(f"invalid sweep: {exc}") from None
    seen: dict[str, int] = {}
    for point in points:
        if point.run_dir in seen:  # folder_name keeps names unique; guard the invariant
            raise HerdError(
                f"points {seen[point.run_dir]} and {point.index} share the folder {point.run_dir}"
            )
        seen[point.run_dir] = point.index
    return points


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def submission_of(row: SweepRow) -> Mapping[str, Any]:
    """What the latest submission of a sweep asked for besides the spec (cwd, options, git)."""
    value = row.spec.get("submission")
    return value if isinstance(value, dict) else {}
