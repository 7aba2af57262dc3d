"""A daemon killed (SIGKILL) while it writes a sweep's point folders, before the sweep's jobs
are stored: its next start removes the folders that submission made, and only those (real
daemon, real kill -9; GPUHERD_TEST_SWEEP_WRITE_DELAY spaces the folders' writes out so the
kill falls between them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import Herd, wait_for


def submit_and_kill(herd: Herd, work: Path, *args: str, made: Path) -> None:
    """Submit the sweep `args` (in the background), kill -9 the daemon once `made` holds its
    params.json, and wait for the submission to give up."""
    submission = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "sweep", *args, "--gpus", "0"],
        cwd=work,
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: (made / "params.json").exists(), 30, f"{made}/params.json")
        herd.kill9()
    finally:
        submission.communicate(timeout=30)
    assert submission.returncode != 0  # (its daemon died under it)


def test_a_sweep_cut_off_by_kill_9_leaves_no_folder_of_its_own(herd: Herd) -> None:
    # The folders written so far stayed, each with a params.json of a point no job ran,
    # until the same sweep was submitted again, or for good.
    herd.env["GPUHERD_TEST_SWEEP_WRITE_DELAY"] = "0.3"  # seconds between two points' folders
    herd.start("--fake-gpus", "1")
    work = herd.home.parent / "work"
    work.mkdir()
    grow = work / "results" / "grow"
    # x=1 runs and fails: its folder is its job's, and the submission below writes it again.
    herd.cli("sweep", "test {x} = 0", "-p", "x", "1", "--name", "grow", "--gpus", "0", cwd=work)
    herd.wait_state(1, "failed")
    values = [str(x) for x in range(1, 9)]
    submit_and_kill(
        herd, work, "test {x} = 0", "-p", "x", *values, "--name", "grow", made=grow / "x=3"
    )
    journals = list((herd.home / "sweep-folders").iterdir())
    assert len(journals) == 1 and (grow / "x=2" / "params.json").exists()  # as the crash left it
    herd.start("--fake-gpus", "1")
    assert sorted(p.name for p in grow.iterdir()) == ["x=1"]  # x=2, x=3 (and x=4?) gone
    assert (grow / "x=1" / "params.json").exists()  # its job's: kept, as its earlier run
    assert list((herd.home / "sweep-folders").iterdir()) == []
    assert (
        "sweep 'grow': a submission cut off before its jobs were stored"
        in (herd.home / "daemon.log").read_text()
    )
    assert [job["id"] for job in herd.all_jobs()] == [1]
    table = herd.json("sweep", "status", "grow")
    assert [(row["folder"], row["state"]) for row in table["rows"]] == [("x=1", "failed")]

    # A new sweep into a results folder of its own: that folder goes too.
    fresh = work / "results" / "fresh"
    submit_and_kill(
        herd, work, "echo {x}", "-p", "x", *values, "--name", "fresh", made=fresh / "x=2"
    )
    herd.start("--fake-gpus", "1")
    assert not fresh.exists() and grow.exists()
    assert [s["name"] for s in herd.json("sweep", "ls")] == ["grow"]
    # Submitted again, it runs as a new sweep (nothing of the cut-off one left to find).
    args = ("sweep", "echo {x}", "-p", "x", "1", "2", "--name", "fresh", "--gpus", "0", "--json")
    again = json.loads(herd.cli(*args, cwd=work).stdout)
    assert (again["new"], sorted(p.name for p in fresh.iterdir())) == (2, ["x=1", "x=2"])
