"""A sweep point's folder across attempts: a new attempt never shows the last one's metrics
as its own (jobfiles.prepare moves them into the attempt that wrote them)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuherd import jobfiles


def test_a_later_attempt_moves_the_metrics_of_the_one_before_into_its_folder(
    tmp_path: Path,
) -> None:
    point = tmp_path / "lr=0.1"
    (point / "attempt-1").mkdir(parents=True)
    (point / "metrics.json").write_text('{"acc": 0.5}')
    jobfiles.prepare(point / "attempt-2")
    assert (point / "attempt-2").is_dir() and not (point / "metrics.json").exists()
    assert json.loads((point / "attempt-1" / "metrics.json").read_text()) == {"acc": 0.5}

    (point / "metrics.json").write_text('{"acc": 0.7}')  # attempt 2's, then attempt 3 starts
    jobfiles.prepare(point / "attempt-3")
    assert json.loads((point / "attempt-2" / "metrics.json").read_text()) == {"acc": 0.7}
    assert json.loads((point / "attempt-1" / "metrics.json").read_text()) == {"acc": 0.5}


def test_what_an_attempt_kept_in_its_own_folder_is_not_overwritten(tmp_path: Path) -> None:
    point = tmp_path / "p"
    (point / "attempt-1").mkdir(parents=True)
    (point / "attempt-1" / "metrics.json").write_text("own")
    (point / "metrics.json").write_text("job folder's")
    jobfiles.prepare(point / "attempt-2")
    assert (point / "attempt-1" / "metrics.json").read_text() == "own"
    assert (point / "attempt-1" / "metrics.job.json").read_text() == "job folder's"
    assert not (point / "metrics.json").exists()


def test_a_first_attempt_or_a_restarted_one_leaves_the_metrics_alone(tmp_path: Path) -> None:
    point = tmp_path / "p"
    point.mkdir()
    (point / "metrics.json").write_text("{}")  # the submit moved older runs' away already
    jobfiles.prepare(point / "attempt-1")
    assert (point / "metrics.json").exists()
    jobfiles.prepare(point / "attempt-1")  # the same attempt again (a restart): its own
    assert (point / "metrics.json").exists()
    run = tmp_path / "job_0"  # `gpuherd run`: attempt 1 in the job's folder, no attempt-1/
    run.mkdir()
    (run / "metrics.json").write_text("{}")
    jobfiles.prepare(run / "attempt-2")
    assert (run / "metrics.json").exists() and not (run / "attempt-1").exists()
