"""herd.db restored from a backup taken before a job was submitted, while that job runs: the
restored database knows no such job, and its next id is that job's. A new job was given it.
Where the unknown run's folder is in the home's jobs/ folder, the daemon numbered new jobs
past it already; a sweep point's folder is its sweep's, so the new job got the run's id, and
with it the run's attempt key, the mark that finds a job's processes: a `gpuherd kill` of the
new job killed the run too. New jobs are now numbered past every such run, and `daemon
status` names the runs and the GPUs held for them, in text and in --json."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from test_restored_database import CHECKPOINT

from conftest import Herd, gone, wait_for


def recorded_start(folder: Path) -> float:
    """When the attempt in `folder` started, as its attempt.json (written a second after the
    start) records it."""
    wait_for((folder / "attempt.json").exists, what=f"{folder}/attempt.json")
    return float(json.loads((folder / "attempt.json").read_text())["started_at"])


def unknown_runs(herd: Herd) -> list[dict[str, Any]]:
    return list(herd.json("daemon", "status")["unknown_runs"])


def ended_unknown(herd: Herd, ids: list[int], results: Path, copy: Path, go: Path) -> None:
    """The sweep points x=1, x=2 of `ids` (jobs of `results`) running until `go`: herd.db
    restored from `copy` meanwhile, which knows neither; then their runs end, seen by the
    daemon (`daemon status` no longer lists them)."""
    pids = [herd.wait_state(i, "running")["pid"] for i in ids]
    for x in (1, 2):
        wait_for((results / f"x={x}" / "attempt-1" / "attempt.json").exists, what="attempt.json")
    herd.restore(copy)
    assert len(unknown_runs(herd)) == 2
    go.touch()
    wait_for(lambda: all(map(gone, pids)), what="the runs to end")
    wait_for(lambda: not unknown_runs(herd), what="the daemon to see them end")


def test_a_new_job_never_takes_the_id_of_a_sweep_point_that_runs_unknown(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    backup = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(backup))  # the queue before the sweep: empty
    go, pid_file = tmp_path / "go", tmp_path / "pid"
    results = herd.home / "results"  # (inside the home: the fixture's clean-up finds the run)
    herd.cli(
        "sweep",
        f"echo $$ > {pid_file}; " + CHECKPOINT.format(go=go) + " # {x}",
        "-p",
        "x",
        "1",
        "--results-dir",
        str(results),
    )
    point = int(herd.json("ls")[0]["id"])
    herd.wait_state(point, "running")
    folder = results / "x=1" / "attempt-1"
    started_at = recorded_start(folder)
    run = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip()))
    herd.restore(backup)
    assert herd.json("daemon", "status")["last_job"] == 0  # (the restored queue's: none)

    new = herd.submit("--", CHECKPOINT.format(go=tmp_path / "go-new"))
    assert new != point  # before: the restored queue's next id, the point's
    assert new > point
    log = (herd.home / "daemon.log").read_text()
    assert f"the database knew no job numbered {point}, whose attempt 1 runs" in log
    # `daemon status` names the run, its folder (its sweep's), its GPU and its start.
    assert unknown_runs(herd) == [
        {
            "job_id": point,
            "attempt": 1,
            "pid": run,
            "gpus": [0],
            "folder": str(folder),
            "started_at": started_at,
        }
    ]
    herd.wait_state(new, "running")
    assert herd.job(new)["gpus"] == [1]  # (GPU 0 held for the run)

    # The new job's kill is its own: the run goes on, its GPU still held.
    herd.cli("kill", str(new))
    herd.wait_state(new, "killed")
    assert not gone(run)  # before: killed with the new job, which shared its attempt key
    # A restart once the new job has ended does not take the run for what that job left.
    herd.cli("daemon", "restart")
    herd.cli("daemon", "status")  # (the start's pass over /proc is done once it answers)
    assert not gone(run)
    assert [r["job_id"] for r in unknown_runs(herd)] == [point]

    go.touch()  # the run ends: nothing is held for it, and status says nothing of it
    wait_for(lambda: gone(run), what="the run to end")
    wait_for(lambda: not unknown_runs(herd), what="status to forget the run")
    assert "unknown to herd.db" not in herd.cli("daemon", "status").stdout


def test_daemon_status_names_a_run_herd_db_does_not_know(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "2")
    said = herd.cli("daemon", "status").stdout
    assert "unknown to herd.db" not in said  # (none: nothing said of it)
    assert unknown_runs(herd) == []
    backup = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(backup))
    go = tmp_path / "go"
    job = herd.submit("--gpus", "2", "--", CHECKPOINT.format(go=go))
    view = herd.wait_state(job, "running")
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    started_at = recorded_start(folder)
    herd.restore(backup)

    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started_at))
    line = (
        f"unknown to herd.db: job {job} attempt 1 (pid {view['pid']}) runs unwatched since "
        f"{since} in {folder}; GPUs 0-1 are held for it until it ends"
    )
    assert line in herd.cli("daemon", "status").stdout.splitlines()  # before: not a word
    assert unknown_runs(herd) == [
        {
            "job_id": job,
            "attempt": 1,
            "pid": view["pid"],
            "gpus": [0, 1],
            "folder": str(folder),
            "started_at": started_at,
        }
    ]
    go.touch()
    wait_for(lambda: gone(view["pid"]), what="the run to end")
    wait_for(lambda: not unknown_runs(herd), what="status to forget the run")
    assert "unknown to herd.db" not in herd.cli("daemon", "status").stdout
