"""Folders whose names end in digits int() refuses (`job_²`: "²".isdigit() is True) are none
of a run's: a rerun's end ended in a traceback (left_over), where it keeps them as they are;
a rerun's job folder holding `attempt-²` lost it as an earlier run's retry (jobfiles)."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd import jobfiles
from gpuherd.runner_rerun import left_over


def test_left_over_ignores_a_folder_of_superscript_digits(tmp_path: Path) -> None:
    for name in ("job_²", "job_³", "job_1²", "job_5", "²"):
        (tmp_path / name).mkdir()
    notice = left_over(str(tmp_path / "job_"), 1)
    assert notice is not None
    assert "holds job_5 (from an earlier run" in notice, notice
    assert "²" not in notice and "³" not in notice


def test_left_over_with_no_prefix_ignores_them_too(tmp_path: Path) -> None:
    (tmp_path / "²").mkdir()
    assert left_over(os.path.join(tmp_path, ""), 1) is None  # (--prefix "": OUTPUT/)


def test_a_rerun_keeps_a_folder_named_attempt_superscript(tmp_path: Path) -> None:
    job = tmp_path / "job_0"
    (job / "attempt-2").mkdir(parents=True)  # an earlier run's retry: goes
    (job / "attempt-²").mkdir()  # the user's: stays
    jobfiles.prepare(job)
    assert sorted(p.name for p in job.iterdir()) == ["attempt-²"]
