"""docs/sweeps.md walked in order: a results folder moved away (`mv results/NAME /archive/`,
"Results"), then the sweep removed ("Removing a sweep"): `sweep rm` says the folder was gone
already, not that it kept it."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for


def test_sweep_rm_of_a_moved_results_folder_says_it_was_gone(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    daemon.cli("sweep", "true {x}", "-p", "x", "1", "2", "--name", "moved", "--gpus", "0", cwd=work)

    def ended() -> bool:
        rows = daemon.json("sweep", "status", "moved")["rows"]
        return all(row["state"] == "succeeded" for row in rows)

    wait_for(ended, 30, "the sweep's 2 points to succeed")
    results = work / "results" / "moved"
    results.rename(work / "archived")
    done = daemon.cli("sweep", "rm", "moved")
    assert done.stdout == (
        f"removed sweep moved (2 jobs); its results folder {results} was gone already"
        " (moved or deleted?)\n"
    )
    assert done.stderr == ""


def test_sweep_rm_of_a_results_folder_in_place_says_it_is_kept(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    daemon.cli("sweep", "true {x}", "-p", "x", "1", "--name", "stays", "--gpus", "0", cwd=work)
    wait_for(
        lambda: daemon.json("sweep", "status", "stays")["rows"][0]["state"] == "succeeded",
        30,
        "the sweep's point to succeed",
    )
    done = daemon.cli("sweep", "rm", "stays")
    results = work / "results" / "stays"
    assert done.stdout == f"removed sweep stays (1 job); results in {results} kept\n"
    assert (results / "x=1" / "SUCCESS").exists()
