"""A folder given where a file of commands goes (`run DIR`, `submit --file DIR`): refused in
one line that says what to give, not the system's bare `Is a directory`."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, Runs

ADVICE = "Is a directory: give a file of commands, one per line"


def test_submit_file_of_a_folder_says_what_to_give(herd: Herd, tmp_path: Path) -> None:
    said = herd.usage_error("submit", "--file", str(tmp_path))
    assert f"cannot read {tmp_path}: {ADVICE}" in said
    assert said.count("\n") == 1


def test_run_of_a_folder_says_what_to_give(runs: Runs) -> None:
    folder = runs.cwd / "experiments"
    folder.mkdir()
    done = runs.run("--fake-gpus", "1", str(folder))
    assert done.returncode == 1, done  # (as for a job file that is missing)
    assert f"cannot read {folder}: {ADVICE}" in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
