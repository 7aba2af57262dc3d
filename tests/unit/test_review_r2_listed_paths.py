"""Layout.listed_paths (`ls --json`'s `job_dir` and `log_files`, built as text) names every
job's folder and logs as Layout.job_dir and Layout.log_file (`show --json`'s) do."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from gpuherd.core.model import Job, JobSpec
from gpuherd.core.output_files import Files
from gpuherd.core.states import JobState
from gpuherd.layout import Layout, listed_paths

FOLDERS = [
    None,
    "/r/sweep/lr=0.1",
    "/r/sweep/lr=0.1/",
    "/r//sweep/x",
    "/r/./sweep/x",
    "//r/x",
    "///r/x",
    "/r/x/.",
    "/r/../x",
    "/home/me/.cache/x",
    "/",
    "//",
    "rel/x",
    "./rel",
    ".",
    "/r/ü x/y",
]
FILES = [(None, None), ("/o/%j-%a.log", None), ("/o/%x.out", "/o/e-%a.err")]
RECORDED: list[Files | None] = [None, ("stdout.log", "stderr.log"), ("/was/o", "/was/e")]


@pytest.mark.parametrize(
    "layout",
    [
        Layout.for_home(Path("/home/me/.local/share/gpuherd")),
        Layout.for_run(Path("out"), "job_", Path("/tmp/state")),
        Layout.for_run(Path("/abs/out"), "", Path("/tmp/state")),
    ],
)
def test_listed_paths_are_shows(layout: Layout) -> None:
    paths = listed_paths(layout)
    for folder, (out, err), attempt, recorded in itertools.product(
        FOLDERS, FILES, (0, 1, 3), RECORDED
    ):
        spec = JobSpec(command="true", cwd="/", folder=folder, output=out, error=err, name="n")
        job = Job(id=7, spec=spec, state=JobState.QUEUED, attempt=attempt)
        files = recorded if attempt else None
        number = attempt or 1
        shown = (
            str(layout.job_dir(job)),
            {s: str(layout.log_file(job, number, s, files)) for s in ("stdout", "stderr")},
        )
        assert paths(job, files) == shown, (folder, out, err, attempt, recorded)
