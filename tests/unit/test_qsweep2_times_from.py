"""`gpuherd run --order longest-first` reads earlier run times from job.json files
(`--times-from`, or the run's own `--output-dir`): a job that was killed, stopped by its
`--timeout`, or lost ran for an unknown while, and is not taken for a short one now; a job
that ended on its own (an exit status, a signal, CUDA out of memory) counts as before."""

from __future__ import annotations

import json
from pathlib import Path

from gpuherd import jobfiles


def _ended(folder: Path, command: str, seconds: float, outcome: str) -> None:
    folder.mkdir(parents=True)
    info = {"command": command, "started_at": 100.0, "ended_at": 100.0 + seconds}
    (folder / "job.json").write_text(json.dumps({**info, "outcome": outcome}))


def test_only_runs_that_ended_on_their_own_give_run_times(tmp_path: Path) -> None:
    for i, outcome in enumerate(["exit", "signal", "cuda_oom", "killed", "timeout", "lost"]):
        _ended(tmp_path / f"job_{i}", f"train {outcome}", 2.0 + i, outcome)
    _ended(tmp_path / "job_9", "train exit", 0.5, "lost")  # the same command, lost: not shorter
    assert jobfiles.earlier_run_times(tmp_path) == {
        "train exit": 2.0,
        "train signal": 3.0,
        "train cuda_oom": 4.0,
    }


def test_a_measured_run_time_leaves_out_its_pauses() -> None:
    from gpuherd.core.run_time import measured_run_time  # (here: the old code had none)

    assert measured_run_time(100.0, 160.0, "exit", paused=20.0) == 40.0
    assert measured_run_time(100.0, 160.0, "killed") is None
    assert measured_run_time(100.0, 160.0, "spawn_error") is None
    assert measured_run_time(None, 160.0, "exit") is None
