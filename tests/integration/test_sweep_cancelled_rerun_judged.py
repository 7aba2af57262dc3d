"""`--force`, then `gpuherd kill` of the held jobs, leaves a sweep as it was (docs/sweeps.md,
"Folders and resume"): a point whose latest job ended without ever starting is judged by its
last run, which the submission moved to previous-runs/<n>/, by `sweep status`, `sweep wait`
and Python's Sweep.wait() and results(), as the next submission judges it. They said the
points `cancelled`, without their metrics, and the wait failed (`jobs 3-4: cancelled by the
user`, exit 1) while a submission skipped them as done (real daemon)."""

from __future__ import annotations

from pathlib import Path

import gpuherd
from conftest import Herd

WRITE_METRICS = '#!/bin/sh\nprintf "{\\"acc\\": %s}" "$1" > "$2/metrics.json"\nexit "${3:-0}"\n'


def _work(tmp_path: Path) -> Path:
    script = tmp_path / "wm.sh"
    script.write_text(WRITE_METRICS)
    script.chmod(0o755)
    return tmp_path


def test_force_then_kill_of_the_held_jobs_leaves_the_sweep_as_it_was(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon, work = shared_daemon, _work(tmp_path)
    sweep = ["sweep", "./wm.sh {i} {run_dir}", "-p", "i", "1", "2", "--name", "fk", "--gpus", "0"]
    sweep += ["--results-dir", str(work / "results"), "-q"]
    daemon.cli(*sweep, cwd=work)
    daemon.cli("sweep", "wait", "fk", "-q")
    before = daemon.cli("sweep", "status", "fk").stdout

    held = daemon.cli(*sweep, "--force", "--hold", cwd=work).stdout.split()
    assert len(held) == 2
    daemon.cli("kill", *held)  # cancelled, never started

    shown = daemon.json("sweep", "status", "fk")
    assert [(r["folder"], r["state"], r["metrics"]) for r in shown["rows"]] == [
        ("i=1", "done", {"acc": 1}),
        ("i=2", "done", {"acc": 2}),
    ]
    assert all(r["seconds"] is not None for r in shown["rows"])  # (its run's job.json times)
    table = daemon.cli("sweep", "status", "fk").stdout
    assert table.splitlines()[0].split() == before.splitlines()[0].split()  # (acc kept)
    assert [line.split()[2] for line in table.splitlines()[1:3]] == ["done", "done"]
    waited = daemon.cli("sweep", "wait", "fk", check=False)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert "2 of 2 points succeeded" in waited.stdout + waited.stderr
    api = gpuherd.connect(daemon.home, start=False).get_sweep("fk")
    assert api.wait() is True
    assert [r["metrics"] for r in api.results()] == [{"acc": 1}, {"acc": 2}]


def test_a_cancelled_rerun_of_a_failed_point_is_failed_and_a_new_one_cancelled(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """Judged by its last run, a point that had failed is failed again (not cancelled); a
    point with no earlier run has nothing to be judged by: its job's end says `cancelled`."""
    daemon, work = shared_daemon, _work(tmp_path)
    sweep = ["sweep", "./wm.sh {i} {run_dir} {i}", "--name", "fk-failed", "--gpus", "0"]
    sweep += ["--results-dir", str(work / "results"), "-q"]
    daemon.cli(*sweep, "-p", "i", "0", "1", cwd=work)
    daemon.cli("sweep", "wait", "fk-failed", "-q", check=False)

    held = daemon.cli(*sweep, "-p", "i", "0", "1", "2", "--force", "--hold", cwd=work)
    daemon.cli("kill", *held.stdout.split())

    rows = daemon.json("sweep", "status", "fk-failed")["rows"]
    assert [(r["folder"], r["state"], r["metrics"]) for r in rows] == [
        ("i=0", "done", {"acc": 0}),
        ("i=1", "failed", {"acc": 1}),
        ("i=2", "cancelled", {}),
    ]
    assert rows[2]["job_id"] == int(held.stdout.split()[-1])
    waited = daemon.cli("sweep", "wait", "fk-failed", check=False)
    assert waited.returncode == 1
    assert "1 of 3 points succeeded" in waited.stdout + waited.stderr
