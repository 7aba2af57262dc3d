"""A `gpuherd run` job that could not run is told the way out of a run, not the daemon's
(real jobs, in-process run):
- on a full disk, `[2] failed (exit 1: the disk ... was full as it ended ...: free some space,
  then gpuherd retry 3)` named a command that cannot reach a run's jobs (no daemon holds
  them), and a job id the run's lines never show (they number jobs from 0);
- in a working folder removed while the run went on, `submit from an existing folder or pass
  --cwd`: `gpuherd run` has no --cwd, its jobs run where it was started."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_for
from gpuherd import engine_endings


class Ends:
    """A Reporter (gpuherd.runner) keeping each end's detail."""

    def __init__(self) -> None:
        self.details: dict[int, str] = {}
        self.notices: list[str] = []

    def ended(self, number: int, state: str, detail: str, seconds: float, folder: str) -> None:
        self.details[number] = detail

    def started(self, number: int, gpus: list[int], command: str) -> None: ...
    def retrying(self, number: int, detail: str) -> None: ...
    def skipped(self, number: int, folder: str) -> None: ...
    def notice(self, text: str) -> None:
        self.notices.append(text)

    def submitted(self, count: int) -> None: ...
    def output(self, number: int, stream: str, line: str) -> None: ...
    def flush(self) -> None: ...


def run(commands: Iterable[str], cwd: Path, out: Path, **options: Any) -> tuple[Any, Ends]:
    from gpuherd.gpus import make_probe
    from gpuherd.runner import Runner, RunOptions, items_from_commands

    probe, slots = make_probe(None, "2")
    ends = Ends()
    runner = Runner(RunOptions(output_dir=out, **options), probe, slots, ends)
    source = items_from_commands(commands, 1, str(cwd), dict(os.environ))
    return asyncio.run(asyncio.wait_for(runner.run(source), 60)), ends


GONE_ADVICE = (
    "the run's jobs run in the folder gpuherd run was started in; create it again, or run "
    "again from an existing folder"
)


def test_a_full_disk_in_a_run_names_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(logs: Iterable[Path]) -> Path:  # every log's disk full, as a tiny tmpfs's was
        return next(iter(logs)).parent

    monkeypatch.setattr(engine_endings, "full_disk_folder", full)
    out = tmp_path / "runs"
    summary, ends = run(["true", "exit 1"], tmp_path, out)
    assert (summary.succeeded, summary.failed) == (1, 1)
    assert ends.details[1] == (
        f"exit 1: the disk of its log folder {out / 'job_1'} was full as it ended, so its last"
        " output may be missing: free some space, then run again into the same --output-dir"
        " with --skip-succeeded (only the jobs that did not succeed run)"
    )


def test_a_working_folder_gone_names_no_cwd_option(tmp_path: Path) -> None:
    gone = tmp_path / "project"
    gone.mkdir()
    # The first job removes the folder while the second waits (one at a time).
    summary, ends = run(['rmdir "$PWD"', "true"], gone, tmp_path / "runs", max_parallel=1)
    said = f"working directory {gone} does not exist: {GONE_ADVICE}"
    if summary.could_not_run:  # (a loaded machine: the input's thread read "true" late)
        assert ends.notices == [f"[1] could not run: true: {said}"]
        return
    assert (summary.succeeded, summary.failed) == (1, 1), (summary, ends.details)
    assert ends.details[1] == said


def test_a_job_read_after_the_folder_is_gone_names_no_cwd_option(tmp_path: Path) -> None:
    """The next line read once the first job has removed the folder: refused before it is
    queued, with the run's advice (the submission's was `... as cwd (--cwd)`)."""
    gone = tmp_path / "project"
    gone.mkdir()

    def lines() -> Iterator[str]:
        yield 'rmdir "$PWD"'
        wait_for(lambda: not gone.exists(), what="the first job to remove the folder")
        yield "true"

    summary, ends = run(lines(), gone, tmp_path / "runs")
    assert (summary.succeeded, summary.could_not_run) == (1, 1), (summary, ends.notices)
    assert ends.notices == [
        f"[1] could not run: true: working directory {gone} does not exist: {GONE_ADVICE}"
    ]
