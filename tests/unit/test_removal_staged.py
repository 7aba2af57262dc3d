"""A removal finds the staged files of a task that never ran in its command, split as a shell
splits it (removal_journal.staged_files), but splits only a command that may name one: shlex
on every job was ~9 us each, 0.4 s of an `rm` of 40,000 queued points
(removal_journal.leftovers). A staged file is a regular file directly in the home's
task-params/, by real paths: `--params-file $GPUHERD_HOME/task-params/..` named the home, and
`rm` of its job deleted it whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd import paths
from gpuherd.core.model import Job, JobSpec
from gpuherd.core.states import JobState
from gpuherd.layout import Layout
from gpuherd.removal_journal import leftovers, staged_files


@pytest.mark.parametrize(
    ("command", "staged"),
    [
        ("python -m gpuherd.worker --params-file {S}/p --function-file {S}/f", 2),
        ("python -m gpuherd.worker --params-file '{S}/p 1.json'", 1),
        ("w --par'ams-f'ile {S}/p.json", 1),  # (a shell's word: the quotes taken out)
        ('w --function""-file {S}/f.pkl --params\\-file {S}/p.json', 2),
        ("w --shared-function-file {S}/shared.pkl", 0),  # (other points read it: kept)
        ("w --params-file /elsewhere/p.json", 0),
        ("true 7", 0),
        ("echo 'unclosed --params-file", 0),
        ("w --params-file {S}/..", 0),  # the home itself
        ("w --params-file {S}/.", 0),
        ("w --params-file {S}/sub", 0),  # a folder
        ("w --params-file {S}/sub/../p.json", 0),  # (its `..`: not directly in task-params)
        ("w --params-file {S}/link.json", 0),  # a link: what it names is not deleted
        ("w --params-file {S}/gone.json", 0),  # nothing there to delete
        ("w --params-file {S}/../herd.db", 0),
        ("w --params-file {L}/p.json", 1),  # the home through a link to it: the same file
    ],
)
def test_a_never_run_jobs_staged_files_are_found_as_a_shell_splits_its_command(
    tmp_path: Path, command: str, staged: int
) -> None:
    home = tmp_path / "home"
    folder = paths.task_params(home)
    (folder / "sub").mkdir(parents=True)
    for name in ("p", "f", "p 1.json", "p.json", "f.pkl", "shared.pkl"):
        (folder / name).write_text("{}")
    (home / "herd.db").write_text("")
    (folder / "link.json").symlink_to(home / "herd.db")
    (tmp_path / "link").symlink_to(home)
    command = command.format(S=folder, L=tmp_path / "link" / "task-params")
    spec = JobSpec(command=command, cwd="/tmp", folder="/tmp/results/point")
    never_ran = Job(id=7, spec=spec, state=JobState.QUEUED, attempt=0)
    found = [path for _, path in leftovers(never_ran, Layout.for_home(home), home)]
    assert found == staged_files(command, folder)
    assert len(found) == staged
    assert all(path.is_file() and not path.is_symlink() for path in found)
