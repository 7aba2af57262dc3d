"""`gpuherd run`: a line read once the run's folder was removed and made again at its path
(a stream's, as `tail -f | gpuherd run` reads) is refused as `could not run`, as one read while
the folder is missing is (docs/run.md). The submission checks the folder by path: it let the
job be queued, to start and fail at once (`[1] failed (working directory ... does not
exist ...)`), as a line read before the folder went does."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_for
from integration.test_qa3_run_advice_words import GONE_ADVICE, run


def test_a_line_read_after_the_folder_is_made_again_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, out = tmp_path / "project", tmp_path / "runs"
    project.mkdir()
    monkeypatch.chdir(project)  # the run's folder: where it is started (RunExecutor)

    def lines() -> Iterator[str]:
        yield "true"
        wait_for(lambda: (out / "job_0" / "SUCCESS").exists(), what="the first job's end")
        shutil.rmtree(project)
        project.mkdir()
        yield "touch ran_here"

    summary, ends = run(lines(), project, out)
    said = f"working directory {project} does not exist: {GONE_ADVICE}"
    assert ends.notices == [f"[1] could not run: touch ran_here: {said}"], ends.details
    assert (summary.succeeded, summary.failed, summary.could_not_run) == (1, 0, 1)
    assert not (project / "ran_here").exists()
