"""A sweep moving into another sweep's results folder is told so once, as it moves in, even
while the other sweep's points are queued or running (real daemon). The warning of its points
skipped for those replaced it, and once the sweep was stored it was never said again: its
next submission took the other sweep's done points as its own without a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Herd, wait_for


def submit(herd: Herd, work: Path, *args: str) -> tuple[dict[str, Any], list[str]]:
    """The submission's JSON answer and its warning lines (stderr)."""
    proc = herd.cli("sweep", *args, "--gpus", "0", "--json", cwd=work)
    return json.loads(proc.stdout), proc.stderr.splitlines()


def ended(herd: Herd, name: str, states: list[str]) -> None:
    def as_said() -> bool:
        rows = herd.json("sweep", "status", name)["rows"]
        return [row["state"] for row in rows] == states

    wait_for(as_said, 30, f"the points of sweep {name} to be {', '.join(states)}")


def test_moving_in_is_said_while_the_other_sweeps_points_wait(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    shared = str(work / "shared")
    one, _ = submit(
        daemon,
        work,
        "echo one {x}",
        "-p",
        "x",
        "1",
        "2",
        "--name",
        "one",
        "--results-dir",
        shared,
        "--hold",
    )
    two = ["echo two {x}", "-p", "x", "1", "2", "3", "--name", "two", "--results-dir", shared]
    answer, stderr = submit(daemon, work, *two)
    assert answer["skipped_active"] == 2
    assert stderr == [
        f"gpuherd: warning: sweep 'one' keeps its results in {shared} too: a point of the same"
        " values is one folder for both, done once (--force runs it again, the other's results"
        " moved to its previous-runs/); give another --results-dir to keep them apart",
        "gpuherd: warning: 2 points skipped: their folders are in use by queued or running jobs"
        " of sweep 'one' (the same results folder); submit again once those ended, or give"
        " another --results-dir",
    ]
    daemon.cli("release", *map(str, one["ids"]))
    ended(daemon, "one", ["succeeded", "succeeded"])
    # x=1 and x=2 are done by one's jobs, in the folders both share: as the warning said.
    ended(daemon, "two", ["done", "done", "succeeded"])
    again, stderr = submit(daemon, work, *two)
    assert again["skipped_done"] == 3
    assert not any("keeps its results" in line for line in stderr)  # said once
