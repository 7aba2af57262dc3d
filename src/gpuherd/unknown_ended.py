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
saying so; a resubmission skips it as done (--force runs it again) or reruns it as failed.
Where herd.db has a job of the point (an earlier one: the backup's), its row is that job's,
as for any point: the folder is not read for it, and a resubmission runs it again.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gpuherd.core.sweep import Point
from gpuherd.core.units import first_named, plural
from gpuherd.executors.local_records import read_process_file
from gpuherd.sweep_files import marker, read_json

if TYPE_CHECKING:
    from gpuherd.sweep_plan import Plan  # (which imports sweep_table, which imports this)


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
    if not isinstance(info, dict) or info.get("ended_at") is not None:
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


def how_it_ended(view: Mapping[str, Any]) -> str:
    code = view["exit_code"]
    return f"exit {code}" if code is not None else f"signal {view['signal']}"


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
            f" {row['unknown_run']['attempt']}, {how_it_ended(row['unknown_run'])}"
        ),
    )
    return [
        f"{plural(len(ended), 'point')} judged by runs herd.db does not know (restored from an"
        f" older backup?) that ended in their folders ({named}): their ends are recorded"
        " there alone (no SUCCESS or FAILURE marker); a submission of the sweep skips those"
        " that exited 0 (--force runs them again) and runs the others again"
    ]


def ended_runs(points: Sequence[Point]) -> dict[str, EndedRun]:
    """Those of `points` (a plan's to submit) whose folder holds such a run and no marker
    (counted new), by folder (on a worker thread): one failed lstat for a point never run,
    a third of what the plan's look for markers took."""
    found = {}
    for point in points:
        if (run := ended_run(point.run_dir)) and marker(point.run_dir) == "missing":
            found[point.run_dir] = run
    return found


def judged_by_ended_runs(
    plan: Plan, ended: Mapping[str, EndedRun], known: Collection[str], force: bool
) -> tuple[Plan, list[str]]:
    """`plan` with its points whose folder holds an ended run (`ended`) judged by it, as the
    table judges them: but those of a folder a job of herd.db ran (`known`), judged by that
    job. Counted new before (no marker), they are done (skipped; rerun with `force`) or
    failed (rerun); and the line that says so of those skipped."""
    judged = {p.run_dir: ended[p.run_dir] for p in plan.to_submit if p.run_dir in ended}
    judged = {folder: run for folder, run in judged.items() if folder not in known}
    if not judged:
        return plan, []
    counts = dict(plan.counts)
    skipped = []
    for run in judged.values():
        counts["new"] -= 1
        kind = "rerun_failed" if not run.succeeded else "rerun_done" if force else "skipped_done"
        counts[kind] += 1
    if not force:
        skipped = [p for p in plan.to_submit if p.run_dir in judged and judged[p.run_dir].succeeded]
    left = {p.run_dir for p in skipped}
    plan = replace(
        plan,
        to_submit=[p for p in plan.to_submit if p.run_dir not in left],
        counts=counts,
        skipped_done=(*plan.skipped_done, *skipped),
    )
    return plan, _skipped_line(skipped, judged)


def _skipped_line(skipped: Sequence[Point], judged: Mapping[str, EndedRun]) -> list[str]:
    if not skipped:
        return []
    if len(skipped) == 1:
        point, run = skipped[0], judged[skipped[0].run_dir]
        return [
            f"point {point.folder} skipped as done: job {run.job_id} attempt {run.attempt}, a"
            " run herd.db does not know (restored from an older backup?), ended in its folder"
            " with exit 0, which alone records its end; --force runs it again"
        ]
    runs = [(p.folder, judged[p.run_dir]) for p in skipped]
    named = first_named(runs, lambda ran: f"{ran[0]}: job {ran[1].job_id} attempt {ran[1].attempt}")
    return [
        f"{len(skipped):,} points skipped as done: runs herd.db does not know (restored from"
        f" an older backup?) ended in their folders with exit 0, which alone record their ends"
        f" ({named}); --force runs them again"
    ]


def _whole(value: Any) -> int | None:
    """A job id's or attempt number's value as job.json holds it; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None
