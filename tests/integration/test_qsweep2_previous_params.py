"""A point run again (`--force`, a failed one resubmitted) moves what its last run left to
`previous-runs/N/`; the parameters that run was made with went nowhere, its params.json being
rewritten for the new run. A copy of it now goes with them (real daemon)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd


def test_previous_runs_keep_the_params_they_ran_with(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    sweep = work / "sweep.yaml"

    def run(epochs: int, *options: str) -> Path:
        sweep.write_text(
            f"name: prev\ncommand: echo {{x}} {{epochs}}\nfixed: {{epochs: {epochs}}}\n"
            "grid: {x: [1]}\ngpus: 0\n"
        )
        ids = daemon.cli("sweep", str(sweep), "-q", *options, cwd=work).stdout.split()
        daemon.wait_state(int(ids[0]), "succeeded")
        return work / "results" / "prev" / "x=1"

    point = run(5)
    before = (point / "params.json").read_text()
    run(50, "--force")  # a fixed value changed: every point again
    previous = point / "previous-runs" / "1"
    assert (previous / "SUCCESS").exists()  # (moved before the sweep was answered)
    assert (previous / "params.json").read_text() == before
    assert json.loads(before)["params"] == {"x": 1, "epochs": 5}
    assert json.loads((point / "params.json").read_text())["params"] == {"x": 1, "epochs": 50}
    assert "1 5" in (previous / "attempt-1" / "stdout.log").read_text()
