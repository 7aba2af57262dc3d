"""herd.db restored from a backup taken before a sweep's points ran, while they run: once
those runs have ended, nothing recorded them but their folders (job.json, and the `exit N`
their shell wrote in attempt-1/process; no SUCCESS or FAILURE marker, which only the daemon
that watched a run writes). Their points read `missing`, `sweep wait` said they never ran,
and a resubmission ran again a point whose run had exited 0. Now the recorded exit judges
the point, as a job's would: `done` (skipped by a resubmission, --force runs it again) or
`failed` (run again), its row naming the run (unknown_ended.py)."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import CHECKPOINT
from test_restored_unknown_run_ids import ended_unknown

from answers_checked import Answers
from conftest import Herd


def test_a_point_is_judged_by_the_exit_of_its_run_herd_db_never_knew(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    go, results = tmp_path / "go", herd.home / "results"
    # Both points run until `go`; then x=1 exits 0, x=2 exits 1.
    template = f"{CHECKPOINT.format(go=go)}; [ {{x}} = 1 ]"
    sweep = ("sweep", template, "-p", "x", "1", "2", "--name", "s", "--results-dir", str(results))
    held = herd.json(*sweep, "--hold")["ids"]
    herd.cli("rm", *map(str, held))
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the sweep known, none of its points run
    ids = herd.json(*sweep)["ids"]
    ended_unknown(herd, ids, results, copy, go)

    table = herd.json("sweep", "status", "s")
    rows = {row["folder"]: row for row in table["rows"]}
    # Before: both missing.
    assert [(rows[x]["state"], rows[x]["job_id"]) for x in ("x=1", "x=2")] == [
        ("done", None),
        ("failed", None),
    ]
    assert rows["x=1"]["unknown_run"]["exit_code"] == 0
    assert rows["x=2"]["unknown_run"]["exit_code"] == 1
    assert rows["x=1"]["unknown_run"]["job_id"] == ids[0]
    assert table["warnings"][0].startswith("2 points judged by runs herd.db does not know")
    # The rows' `unknown_run` is in the HTTP API's schema of a sweep's table.
    over_http = Answers(herd).check("GET", "/sweeps/s", template="/sweeps/{name}")
    assert over_http["rows"][0]["unknown_run"]["exit_code"] == 0
    (listed,) = herd.json("sweep", "ls")
    assert listed["counts"] == {"done": 1, "failed": 1}
    waited = herd.cli("sweep", "wait", "s", check=False)
    assert waited.returncode == 1, waited  # x=2 failed (before: neither had run)
    # Before: "point x=2: failed (no job left; its folder holds FAILURE)", which it does not.
    assert waited.stderr == (
        f"point x=2: failed (no job in herd.db; job {ids[1]} attempt 1, a run it does not know"
        " (restored from an older backup?), ended in its folder with exit 1)\n"
    )

    answer = herd.json(*sweep)
    assert (answer["skipped_done"], answer["rerun_failed"], answer["new"]) == (1, 1, 0)
    (rerun,) = answer["ids"]  # before: both points run again
    assert herd.wait_state(rerun, "failed")["name"] == "s/x=2"
    assert answer["warnings"] == [
        f"point x=1 skipped as done: job {ids[0]} attempt 1, a run herd.db does not know"
        " (restored from an older backup?), ended in its folder with exit 0, which alone"
        " records its end; --force runs it again"
    ]
    assert not (results / "x=1" / "previous-runs").exists()
    # --force runs it again, its run's files moved aside as a done point's are.
    forced, _ = herd.json(*sweep, "--force")["ids"]  # (x=1, x=2 again)
    assert herd.wait_state(forced, "succeeded")["name"] == "s/x=1"
    assert (results / "x=1" / "previous-runs" / "1" / "attempt-1" / "process").exists()
