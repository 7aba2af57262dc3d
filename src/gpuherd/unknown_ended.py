"""A sweep point's run that ended while herd.db did not know it (restored from an older
backup, moved aside): what its folder holds, and how the point is judged by it.

Such a run leaves what any run leaves at its start, its job.json (job id, attempt, start) and
its attempt-N/ folder, and, at its end, the `exit N` its shell appends to that folder's
`process` file; but no SUCCESS or FAILURE marker, which only the daemon that watched a run
writes, nor an end in its job.json. Its point read `missing` in `sweep status`, and a
resubmission ran it again, however it ended.

Now, where no job of herd.db ran the point (the table judges it by its folder: sweep_table.py,
and so do `sweep wait` and `Sweep.wait()`: core/sweep_verdict.py), that recorded exit judges
it: `done` with exit 0, else `failed`, the row naming the run (`unknown_run`) and a line
saying so; a resubmission skips it as done (--force runs it again) or reruns it as failed
(sweep_plan.judged_by_ended_runs, with the runs found here: ended_runs).
Where herd.db has a job of the point (an earlier one: the backup's), its row is that job's,
as for any point: the folder is not read for it, and a resubmission runs it again.

A job that starts in such a folder (herd.db's job of the point released or retried, a
submission over HTTP into it) moves the run's files to previous-runs/<n>/ first, as a
resubmission moves a point's last run (set_aside): its attempt 1 in the run's attempt-1/
deleted the `process` file, the only record of the run's end, and added its output to the
run's logs. So does one that starts where another job's run ended watched by its daemon
(its end in job.json, a SUCCESS or FAILURE beside it) that herd.db forgot since: its attempt
1 deleted that run's markers and logs.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuherd.core.sweep import Point
from gpuherd.core.sweep_verdict import ended_with
from gpuherd.core.units import first_named, plural
from gpuherd.executors.local_records import read_process_file
from gpuherd.sweep_files import marker, read_json
from gpuherd.sweep_folders import move_previous_run


@dataclass(frozen=True)
class EndedRun:
    job_id: int
    attempt: int
    pid: int | None
    exit_code: int | None
    signal: int | None
    started_at: float | None
    ended_at: float
    """When its shell wrote its exit (the `process` file's time)."""

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0

    @property
    def state(self) -> str:
        """The point's, as its folder's marker would say it (sweep_files.marker)."""
        return "done" if self.succeeded else "failed"

    def view(self) -> dict[str, Any]:
        """A `sweep status` row's `unknown_run`."""
        return {
            "job_id": self.job_id,
            "attempt": self.attempt,
            "pid": self.pid,
            "exit_code": self.exit_code,
            "signal": self.signal,
        }


def ended_run(run_dir: str) -> EndedRun | None:
    """The run the point's folder holds whose end its shell recorded and no daemon did (the
    caller found no marker there); None where there is none. One failed open for a folder
    where nothing ran (a point never submitted)."""
    info = read_json(os.path.join(run_dir, "job.json"))
    return _shell_ended(run_dir, info) if isinstance(info, dict) else None


def _shell_ended(run_dir: str, info: Mapping[str, Any]) -> EndedRun | None:
    """ended_run, of the folder's job.json read (`info`)."""
    if info.get("ended_at") is not None:
        return None  # (an end in job.json: a daemon recorded it, its marker removed since)
    job_id, attempt = _whole(info.get("id")), _whole(info.get("attempt"))
    if job_id is None or attempt is None:
        return None
    pid, status = read_process_file(os.path.join(run_dir, f"attempt-{attempt}"))
    if status is None or (status.exit_code is None and status.signal is None):
        return None
    started = info.get("started_at")
    return EndedRun(
        job_id,
        attempt,
        pid,
        status.exit_code,
        status.signal,
        float(started) if isinstance(started, int | float) else None,
        status.ended_at,
    )


def set_aside(folder: str, job_id: int) -> None:
    """Before an attempt of job `job_id` starts in `folder`, its own (a sweep point's, an HTTP
    `folder`): move a run of another job found ended there to previous-runs/<n>/, whoever
    recorded its end: its shell alone (such a run), or its daemon (job.json's end, a marker),
    herd.db knowing that job no more (restored from an older backup). One failed open where
    there is none (job.json: a point's submission moved its last run's)."""
    info = read_json(os.path.join(folder, "job.json"))
    if not isinstance(info, dict) or _whole(info.get("id")) in (None, job_id):
        return  # (its own: numbered past, attempt_numbers)
    watched = info.get("ended_at") is not None or marker(folder) != "missing"
    if watched or _shell_ended(folder, info) is not None:
        move_previous_run(folder)


def shown_ended(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """`sweep status`'s line on its rows judged by such runs (one line, whatever their
    number)."""
    ended = [row for row in rows if "unknown_run" in row]
    if not ended:
        return []
    named = first_named(
        ended,
        lambda row: (
            f"{row['folder']}: job {row['unknown_run']['job_id']} attempt"
            f" {row['unknown_run']['attempt']}, {ended_with(row['unknown_run'])}"
        ),
    )
    return [
        f"{plural(len(ended), 'point')} judged by runs herd.db does not know (restored from an"
        f" older backup?) that ended in their folders ({named}): their ends are recorded"
        " there alone (no SUCCESS or FAILURE marker); a submission of the sweep skips those"
        " that exited 0 (--force runs them again) and runs the others again"
    ]


def ended_runs(points: Sequence[Point], there: Collection[str]) -> dict[str, EndedRun]:
    """Those of `points` (a plan's to submit) whose folder holds such a run and no marker
    (counted new), by folder (on a worker thread). Only the folders `there` are read (the
    plan's listing of their results folder: Plan.there, from sweep_files.points_there): a
    resubmission's new points have none, and opening job.json in each cost a failed open
    per point (40,000 new points: 0.3 to 0.5 s), listing the folder again ~10 ms more."""
    found = {}
    for point in points:
        folder = point.run_dir
        if folder in there and (run := ended_run(folder)) and marker(folder) == "missing":
            found[folder] = run
    return found


def _whole(value: Any) -> int | None:
    """A job id's or attempt number's value as job.json holds it; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None
