"""A sweep's points whose folders a run no job of the queue runs writes in (a restored
herd.db: sweep_unwatched.py): planned as running, said in one line, shown running by
`sweep status` whatever --state, --limit and --sort keep. The daemon's side is
tests/reliability/test_restored_sweep_point_runs.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuherd.core.sweep import Point, spec_from_dict
from gpuherd.sweep_plan import plan_points
from gpuherd.sweep_table import expand_points, sort_rows
from gpuherd.sweep_unwatched import FolderRun, not_rerun, with_runs


def points_in(results: Path, count: int) -> list[Point]:
    spec = spec_from_dict(
        {
            "name": "s",
            "command": "echo {x}",
            "grids": [{"x": list(range(1, count + 1))}],
            "results_dir": str(results),
        }
    )
    return expand_points(spec)


def test_a_point_a_run_writes_in_is_planned_as_running_force_or_not(tmp_path: Path) -> None:
    x1, x2, x3 = points_in(tmp_path, 3)
    Path(x2.run_dir).mkdir()
    (Path(x2.run_dir) / "SUCCESS").touch()
    busy = {x1.run_dir, x2.run_dir}
    plan = plan_points("s", [x1, x2, x3], False, {}, busy)
    assert (plan.to_submit, plan.unwatched) == ([x3], [x1])  # x2 done: skipped as done
    assert (plan.counts["new"], plan.counts["skipped_active"]) == (1, 1)
    forced = plan_points("s", [x1, x2, x3], True, {}, busy)
    assert (forced.to_submit, forced.unwatched) == ([x3], [x1, x2])  # before: all three
    assert (forced.counts["rerun_done"], forced.counts["skipped_active"]) == (0, 2)
    # A folder a queued or running job of the queue has is that job's: not said again.
    queued = plan_points("s", [x1, x2, x3], False, {x1.run_dir: "s"}, busy)
    assert (queued.to_submit, queued.unwatched) == ([x3], [])


def test_many_points_are_said_in_one_line_naming_the_first_three(tmp_path: Path) -> None:
    points = points_in(tmp_path, 5)
    runs = {p.run_dir: FolderRun(10 + i, 1, 500 + i, None) for i, p in enumerate(points)}
    runs[points[1].run_dir] = FolderRun(11, 2, 501, None, "cancelled")
    (line,) = not_rerun(points, runs, force=True)
    assert line.startswith(
        "5 points not submitted, --force or not: runs gpuherd does not watch write in their"
        " folders (x=1: job 10 attempt 1 (pid 500), unknown to herd.db; x=2: job 11 attempt 2"
        " (pid 501), its job cancelled; x=3: job 12 attempt 1 (pid 502), unknown to herd.db;"
        " 2 more); "
    )
    assert line.endswith("or end them first (kill -TERM -PID: the run's process group)")
    assert not_rerun([], runs, force=True) == []


def a_table(rows: list[dict[str, Any]], results: Path) -> dict[str, Any]:
    return {
        "results_dir": str(results),
        "varying": ["x"],
        "metric_keys": [],
        "counts": {},
        "matched": len(rows),
        "outside_matched": 0,
        "rows": rows,
        "outside": [],
        "warnings": ["as the table said it"],
    }


def test_status_shows_the_point_running_through_state_limit_and_sort(tmp_path: Path) -> None:
    points = points_in(tmp_path, 3)

    def row(point: Point, state: str, job: int | None) -> dict[str, Any]:
        return {
            "index": point.index,
            "folder": point.folder,
            "run_dir": point.run_dir,
            "params": dict(point.params),
            "state": state,
            "job_id": job,
            "started_at": None,
            "ended_at": None,
            "seconds": None,
            "peak_mem": None,
            "metrics": {},
        }

    def table_of(sort: str | None, states: Sequence[str], limit: int | None) -> dict[str, Any]:
        rows = [row(points[0], "succeeded", 1), row(points[1], "missing", None)]
        rows.append(row(points[2], "queued", 3))
        rows = sort_rows(rows, sort, ["x"], []) if sort else rows
        rows = [r for r in rows if not states or r["state"] in states]
        return a_table(rows[:limit], tmp_path)

    runs = {points[1].run_dir: FolderRun(7, 1, 4242, 100.0)}
    runs[points[2].run_dir] = FolderRun(8, 1, 4243, 100.0)  # its queued job says it: kept
    runs[str(tmp_path) + "-other/x=1"] = FolderRun(9, 1, 4244, 100.0)  # not this sweep's
    asked: tuple[str | None, Sequence[str], int | None] = ("-state", ["RUNNING"], 1)
    shown = with_runs(table_of(*asked), table_of, asked, runs, now=160.0)
    (running,) = shown["rows"]  # before: none (x=2 read missing)
    assert (running["folder"], running["state"], running["job_id"]) == ("x=2", "running", 7)
    assert (running["started_at"], running["seconds"]) == (100.0, 60.0)
    assert shown["counts"] == {"succeeded": 1, "running": 1, "queued": 1}
    assert shown["matched"] == 1
    assert shown["warnings"][0] == "as the table said it"
    assert shown["warnings"][1].startswith(
        "point x=2 is shown running: job 7 attempt 1 (pid 4242) runs in its folder"
    )
    assert len(shown["warnings"]) == 2
    # Sorted by state again: x=2 sorts as running now.
    every = with_runs(table_of("state", [], None), table_of, ("state", [], None), runs, 160.0)
    assert [r["folder"] for r in every["rows"]] == ["x=3", "x=2", "x=1"]
    # None of the sweep's folders: the table as it was.
    others = {str(tmp_path) + "-other/x=2": FolderRun(9, 1, 4244, 100.0)}
    plain = table_of(None, [], None)
    assert with_runs(plain, table_of, (None, [], None), others, 160.0) is plain
