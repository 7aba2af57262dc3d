"""A removal finds the staged files of a task that never ran in its command, split as a shell
splits it (worker.staged_files), but splits only a command that may name one: shlex on every
job was ~9 us each, 0.4 s of an `rm` of 40,000 queued points (removal_journal.leftovers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd import paths
from gpuherd.core.model import Job, JobSpec
from gpuherd.core.states import JobState
from gpuherd.layout import Layout
from gpuherd.removal_journal import leftovers
from gpuherd.worker import staged_files

HOME = Path("/home/ada/.gpuherd")
STAGED = paths.task_params(HOME)


@pytest.mark.parametrize(
    ("command", "staged"),
    [
        (f"python -m gpuherd.worker --params-file {STAGED}/p --function-file {STAGED}/f", 2),
        (f"python -m gpuherd.worker --params-file '{STAGED}/p 1.json'", 1),
        (f"w --par'ams-f'ile {STAGED}/p.json", 1),  # (a shell's word: the quotes taken out)
        (f'w --function""-file {STAGED}/f.pkl --params\\-file {STAGED}/p.json', 2),
        (f"w --shared-function-file {STAGED}/shared.pkl", 0),  # (other points read it: kept)
        ("w --params-file /elsewhere/p.json", 0),
        ("true 7", 0),
        ("echo 'unclosed --params-file", 0),
    ],
)
def test_a_never_run_jobs_staged_files_are_found_as_a_shell_splits_its_command(
    command: str, staged: int
) -> None:
    spec = JobSpec(command=command, cwd="/tmp", folder="/tmp/results/point")
    never_ran = Job(id=7, spec=spec, state=JobState.QUEUED, attempt=0)
    found = [path for _, path in leftovers(never_ran, Layout.for_home(HOME), HOME)]
    assert found == staged_files(command, STAGED)
    assert len(found) == staged
