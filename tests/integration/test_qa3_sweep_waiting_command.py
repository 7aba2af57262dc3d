"""A sweep submitted again with a fixed template while its points still wait (queued, held):
a submission skips a point already queued, so those points would run the command as it was,
and only the done ones said so. Now the waiting ones are said too, with the way out (real
daemon)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Herd

WARNING = (
    "2 points of sweep 'fix' still waiting to run (queued or held) will run another command "
    "than the sweep's now (echo v1 1, ...): submitting it again does not change them; cancel "
    "them (gpuherd kill $(gpuherd ls -q --sweep fix --state queued,held)), then submit it "
    "again to run the new command"
)


def submit(herd: Herd, work: Path, template: str, *options: str) -> tuple[dict[str, Any], str]:
    args = ("sweep", template, "-p", "x", "1", "2", "--name", "fix", "--gpus", "0", *options)
    proc = herd.cli(*args, "--json", cwd=work)
    return json.loads(proc.stdout), proc.stderr


def test_waiting_points_of_another_command_are_said(daemon: Herd, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first, _ = submit(daemon, work, "echo v1 {x}", "--hold")
    again, stderr = submit(daemon, work, "echo v2 {x}")
    assert (again["new"], again["skipped_active"], again["ids"]) == (0, 2, [])
    assert again["warnings"] == [WARNING]
    assert stderr.splitlines() == [f"gpuherd: warning: {WARNING}"]
    # `sweep status` says the same of them: they have no results yet, and --force would
    # not change them (it said "their results are shown; ... --force runs them again").
    status = daemon.cli("sweep", "status", "fix", cwd=work).stdout.splitlines()
    assert status[-1] == (
        "2 points waiting to run (queued or held) will run another command than the sweep's "
        "now (echo v1 1, ...): cancel them (gpuherd kill $(gpuherd ls -q --sweep fix --state "
        "queued,held)), then submit the sweep again to run the new command"
    )
    # Resubmitting with the same template says nothing: the points run what was asked.
    same, stderr = submit(daemon, work, "echo v1 {x}")
    assert (same["skipped_active"], same["warnings"], stderr) == (2, [], "")
    # The way out the warning gives: cancel them, submit again, and the new command runs.
    listed = daemon.cli("ls", "-q", "--sweep", "fix", "--state", "queued,held").stdout.split()
    assert sorted(map(int, listed)) == sorted(first["ids"])
    daemon.cli("kill", *listed)
    fixed, stderr = submit(daemon, work, "echo v2 {x}")
    assert (fixed["new"], len(fixed["ids"]), stderr) == (2, 2, "")
    commands = [daemon.job(job_id)["command"] for job_id in fixed["ids"]]
    assert commands == ["echo v2 1", "echo v2 2"]
    assert "another command" not in daemon.cli("sweep", "status", "fix", cwd=work).stdout
