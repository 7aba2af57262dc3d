"""A sweep's points whose folders a run no job of the queue runs writes in (a restored
herd.db: sweep_unwatched.py): planned as running, said in one line, shown running by
`sweep status` whatever --state, --limit and --sort keep. The daemon's side is
tests/reliability/test_restored_sweep_point_runs.py."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from gpuherd import sweep_plan, sweep_table, unknown_ended
from gpuherd.core.model import JobSpec
from gpuherd.core.sweep import Point, spec_from_dict, spec_to_dict
from gpuherd.store import NewJob, Store
from gpuherd.sweep_plan import judged_by_ended_runs, plan_points
from gpuherd.sweep_specs import expand_points
from gpuherd.sweep_unwatched import FolderRun, not_rerun
from gpuherd.unknown_ended import ended_runs


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


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "home" / "herd.db")
    yield opened
    opened.close()


def swept(store: Store, results: Path, count: int) -> list[Point]:
    """Sweep `s` of `count` points (x=1..count) in `results`, none of them run."""
    spec = spec_from_dict(
        {"name": "s", "command": "echo {x}", "grids": [{"x": list(range(1, count + 1))}]}
    )
    spec = replace(spec, results_dir=str(results))
    store.put_sweep("s", str(results), spec_to_dict(spec), now=1.0)
    return expand_points(spec)


def test_status_shows_the_point_running_through_state_limit_and_sort(
    tmp_path: Path, store: Store
) -> None:
    """Shown running as the table is built (sweep_table.py), before --state, --limit and
    --sort keep and order its rows: before, a table built without it was patched after."""
    results = tmp_path / "results"
    x1, x2, x3 = swept(store, results, 3)
    (Path(x1.run_dir) / "SUCCESS").parent.mkdir(parents=True)
    (Path(x1.run_dir) / "SUCCESS").touch()  # done, its job gone (`gpuherd clean`)
    job = JobSpec(command="echo 3", cwd="/tmp", folder=x3.run_dir, sweep="s")
    (queued,) = store.add_jobs([NewJob(job)], now=2.0)
    runs = {x2.run_dir: FolderRun(7, 1, 4242, time.time() - 60)}
    runs[x3.run_dir] = FolderRun(8, 1, 4243, 100.0)  # its queued job says it: kept
    runs[str(tmp_path) + "/results-other/x=1"] = FolderRun(9, 1, 4244, 100.0)  # not its

    shown = sweep_table.table(store, "s", "-state", ["RUNNING"], 1, runs)
    (running,) = shown["rows"]  # before: none (x=2 read missing)
    assert (running["folder"], running["state"], running["job_id"]) == ("x=2", "running", 7)
    assert 60.0 <= running["seconds"] < 70.0 and running["peak_mem"] is None
    assert shown["counts"] == {"done": 1, "running": 1, "queued": 1}
    assert shown["matched"] == 1
    (said,) = shown["warnings"]
    assert said.startswith(
        "point x=2 is shown running: job 7 attempt 1 (pid 4242) runs in its folder, unknown to"
        " herd.db (restored from an older backup?); no job of the queue runs it, and once it"
        " has ended, the exit it writes there judges the point"
    )
    # Sorted by state: x=2 sorts as running (its state read missing before).
    every = sweep_table.table(store, "s", "state", runs=runs)
    assert [(r["folder"], r["state"]) for r in every["rows"]] == [
        ("x=1", "done"),
        ("x=3", "queued"),
        ("x=2", "running"),
    ]
    assert every["rows"][1]["job_id"] == queued
    (listed,) = sweep_table.listing(store, runs)
    assert listed["counts"] == {"done": 1, "running": 1, "queued": 1}
    # No run in the sweep's folders: as without them.
    plain = sweep_table.table(store, "s")
    assert plain["counts"] == {"done": 1, "missing": 1, "queued": 1}
    assert plain["warnings"] == []
    assert sweep_table.table(store, "s", runs={}) == plain


def ended_there(point: Point, job_id: int, code: int) -> None:
    """What a run herd.db does not know leaves in the point's folder once it has ended: its
    job.json and attempt.json of its start, and its shell's `process` file; no marker."""
    attempt = Path(point.run_dir) / "attempt-1"
    attempt.mkdir(parents=True)
    started = {"id": job_id, "attempt": 1, "pid": 300 + job_id, "started_at": 50.0}
    (Path(point.run_dir) / "job.json").write_text(json.dumps(started))
    (attempt / "attempt.json").write_text(json.dumps(started))
    (attempt / "process").write_text(f"pid {300 + job_id}\nexit {code}\n")


def test_a_point_is_judged_by_the_end_of_a_run_herd_db_does_not_know(
    tmp_path: Path, store: Store
) -> None:
    results = tmp_path / "results"
    x1, x2, x3, x4 = swept(store, results, 4)
    ended_there(x1, 7, 0)
    ended_there(x2, 8, 3)
    ended_there(x3, 9, 137)  # (the shell's 128 + 9: killed)
    Path(x4.run_dir).mkdir()
    (Path(x4.run_dir) / "params.json").write_text("{}")  # written, never run: missing

    table = sweep_table.table(store, "s")
    by_folder = {row["folder"]: row for row in table["rows"]}
    assert [by_folder[p.folder]["state"] for p in (x1, x2, x3, x4)] == [
        "done",  # before: missing
        "failed",  # before: missing
        "failed",
        "missing",
    ]
    assert by_folder["x=1"]["unknown_run"] == {
        "job_id": 7,
        "attempt": 1,
        "pid": 307,
        "exit_code": 0,
        "signal": None,
    }
    assert by_folder["x=3"]["unknown_run"]["signal"] == 9
    assert by_folder["x=1"]["job_id"] is None  # (no job of herd.db: `sweep wait` asks none)
    assert by_folder["x=1"]["started_at"] == 50.0 and by_folder["x=1"]["ended_at"] > 50.0
    assert "unknown_run" not in by_folder["x=4"]
    assert table["warnings"] == [
        "3 points judged by runs herd.db does not know (restored from an older backup?) that"
        " ended in their folders (x=1: job 7 attempt 1, exit 0; x=2: job 8 attempt 1, exit 3;"
        " x=3: job 9 attempt 1, signal 9): their ends are recorded there alone (no SUCCESS or"
        " FAILURE marker); a submission of the sweep skips those that exited 0 (--force runs"
        " them again) and runs the others again"
    ]
    (listed,) = sweep_table.listing(store)
    assert listed["counts"] == {"done": 1, "failed": 2, "missing": 1}

    # A submission judges them so: x=1 skipped as done, x=2 and x=3 run again as failed.
    points = [x1, x2, x3, x4]
    plan = plan_points("s", points, False, {})
    ended = ended_runs(plan.to_submit, plan.there)
    judged, said = judged_by_ended_runs(plan, ended, set(), force=False)
    assert judged.to_submit == [x2, x3, x4]  # before: all four, x=1 run again
    assert judged.skipped_done == (x1,)
    assert judged.counts == {
        "new": 1,
        "rerun_failed": 2,
        "rerun_done": 0,
        "skipped_done": 1,
        "skipped_active": 0,
    }
    assert said == [
        "point x=1 skipped as done: job 7 attempt 1, a run herd.db does not know (restored from"
        " an older backup?), ended in its folder with exit 0, which alone records its end;"
        " --force runs it again"
    ]
    forced, said = judged_by_ended_runs(plan, ended, set(), force=True)
    assert forced.to_submit == points and said == []
    assert (forced.counts["new"], forced.counts["rerun_done"]) == (1, 1)
    # A point a job of herd.db ran is that job's, here as in the table.
    known, said = judged_by_ended_runs(plan, ended, {x1.run_dir}, force=False)
    assert (known.to_submit, said) == (points, [])
    assert (known.counts["new"], known.counts["rerun_failed"]) == (2, 2)


def test_many_points_skipped_for_their_ended_runs_are_said_in_one_line(
    tmp_path: Path, store: Store
) -> None:
    points = swept(store, tmp_path / "results", 4)
    for job_id, point in enumerate(points, start=7):
        ended_there(point, job_id, 0)
    plan = plan_points("s", points, False, {})
    ended = ended_runs(points, plan.there)
    judged, (line,) = judged_by_ended_runs(plan, ended, set(), force=False)
    assert (judged.to_submit, judged.counts["skipped_done"]) == ([], 4)
    assert line == (
        "4 points skipped as done: runs herd.db does not know (restored from an older backup?)"
        " ended in their folders with exit 0, which alone record their ends (x=1: job 7"
        " attempt 1; x=2: job 8 attempt 1; x=3: job 9 attempt 1; 1 more); --force runs them"
        " again"
    )


def test_a_resubmissions_new_points_are_not_looked_into_one_by_one(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's look for such runs opened job.json in each new point's folder, none of
    which is there: a 40,000-point sweep paid 40,000 failed opens (0.3 to 0.5 s). Now the
    plan's one listing of the results folder (its markers' look) tells which to read."""
    points = swept(store, tmp_path / "results", 1_000)
    ended_there(points[0], 7, 0)
    Path(points[1].run_dir).mkdir()  # (params.json only: written, never run)
    listed: list[str] = []
    listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path: listed.append(path) or listdir(path))
    plan = plan_points("s", points, False, {})
    read = []
    monkeypatch.setattr(unknown_ended, "read_json", lambda path: read.append(path))
    assert ended_runs(plan.to_submit, plan.there) == {}  # (none read: the stub reads nothing)
    assert sorted(read) == sorted(str(Path(p.run_dir) / "job.json") for p in points[:2])
    assert listed == [str(tmp_path / "results")]  # once for both looks (before: twice)
    monkeypatch.undo()
    assert list(ended_runs(plan.to_submit, plan.there)) == [points[0].run_dir]
    # No results folder at all (a first submission): nothing is read.
    first = swept(store, tmp_path / "none", 3)
    assert ended_runs(first, plan_points("s", first, False, {}).there) == {}


def test_a_resubmissions_markers_are_looked_for_only_in_folders_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan_points looked for SUCCESS and FAILURE in every point's folder: two failed lookups
    for each new point (80,000 for 40,000 new points). Now one listing of the results folder
    tells which folders to look into; the plan is the same."""
    results = tmp_path / "results"
    points = points_in(results, 1_000)
    x1, x2, x3, x4, x5 = (Path(p.run_dir) for p in points[:5])
    for folder in (x1, x2, x3):
        folder.mkdir(parents=True)
    (x1 / "SUCCESS").touch()
    (x2 / "FAILURE").touch()  # (x3: params.json only, never run)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SUCCESS").touch()
    x4.symlink_to(tmp_path / "elsewhere")  # (a link is looked through, as before)
    x5.mkdir()
    (x5 / "SUCCESS").touch()
    (x5 / "FAILURE").touch()  # (both: done)
    looked: list[str] = []
    marker = sweep_plan.marker
    monkeypatch.setattr(
        sweep_plan, "marker", lambda run_dir: looked.append(run_dir) or marker(run_dir)
    )
    plan = plan_points("s", points, False, {})
    assert sorted(looked) == sorted(p.run_dir for p in points[:5])  # before: all 1,000
    assert plan.to_submit == [points[1], points[2], *points[5:]]
    assert plan.skipped_done == (points[0], points[3], points[4])
    assert plan.counts == {
        "new": 996,
        "rerun_failed": 1,
        "rerun_done": 0,
        "skipped_done": 3,
        "skipped_active": 0,
    }
    # No results folder at all (a first submission): nothing is looked into.
    looked.clear()
    assert plan_points("s", points_in(tmp_path / "none", 3), False, {}).counts["new"] == 3
    assert looked == []


def test_status_looks_only_into_the_folders_there_of_points_no_job_ran(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sweep status` looked for SUCCESS, FAILURE, job.json, metrics.json and params.json in
    the folder of every point no job of herd.db ran: ~5 failed lookups for each one never run
    (a 40,000-point table where 100 ran: ~1 s). Now one listing of the results folder tells
    which folders to look into; the rows are the same."""
    results = tmp_path / "results"
    points = swept(store, results, 1_000)
    x1, x2, x3, x4 = (Path(p.run_dir) for p in points[:4])
    x1.mkdir(parents=True)
    (x1 / "SUCCESS").touch()
    (x1 / "metrics.json").write_text('{"acc": 0.5}')
    (x1 / "params.json").write_text(json.dumps({"params": {"x": 10}, "command": "echo 10"}))
    x2.mkdir()
    (x2 / "FAILURE").touch()
    ended_there(points[2], 7, 0)  # (x=3: a run herd.db does not know, ended with exit 0)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SUCCESS").touch()
    x4.symlink_to(tmp_path / "elsewhere")  # (a link is looked through, as before)
    looked: list[str] = []
    for name in ("marker", "ended_run", "read_json", "read_metrics"):
        real = getattr(sweep_table, name)
        monkeypatch.setattr(
            sweep_table, name, lambda path, real=real: looked.append(str(path)) or real(path)
        )

    table = sweep_table.table(store, "s")
    folders = {p if os.path.basename(p).startswith("x=") else os.path.dirname(p) for p in looked}
    assert folders == {str(x1), str(x2), str(x3), str(x4)}  # before: all 1,000
    assert table["counts"] == {"done": 3, "failed": 1, "missing": 996}
    by_folder = {row["folder"]: row for row in table["rows"]}
    assert (by_folder["x=1"]["params"], by_folder["x=1"]["metrics"]) == ({"x": 10}, {"acc": 0.5})
    assert by_folder["x=1"]["other_command"] == "echo 10"
    assert by_folder["x=3"]["unknown_run"]["job_id"] == 7
    assert by_folder["x=9"] == {
        "index": 8,
        "folder": "x=9",
        "run_dir": str(results / "x=9"),
        "params": {"x": 9},
        "other_command": None,
        "in_spec": True,
        "state": "missing",
        "job_id": None,
        "started_at": None,
        "ended_at": None,
        "seconds": None,
        "metrics": {},
        "peak_mem": None,
    }
    looked.clear()
    (listed,) = sweep_table.listing(store)
    assert listed["counts"] == {"done": 3, "failed": 1, "missing": 996}
    assert len(looked) < 10  # before: 2,000 and more
