"""Which folders of an output file's name must exist at submission, and which an attempt
creates (core/output_files.fixed_folder, folders_to_make)."""

from __future__ import annotations

import pytest

from gpuherd.core.model import JobSpec
from gpuherd.core.output_files import (
    OutputFile,
    attempt_files_for,
    fixed_folder,
    folders_to_make,
    launch_files,
)


def test_the_fixed_folder_ends_before_the_first_part_with_a_placeholder() -> None:
    assert fixed_folder("/r/runs/%j/a%a/out.log") == "/r/runs"
    assert fixed_folder("/r/runs/exp-%x/out.log") == "/r/runs"
    assert fixed_folder("/r/100%%/%x/o.log") == "/r/100%"  # %% is a percent sign
    assert fixed_folder("/r/o-%j.log") == "/r"  # a placeholder in the file's name alone
    assert fixed_folder("/%x/o.log") == "/"


def test_the_folders_after_it_are_made_outermost_first() -> None:
    made = folders_to_make("/r/runs", "/r/runs/exp/7/a1/out.log")
    assert made == ["/r/runs/exp", "/r/runs/exp/7", "/r/runs/exp/7/a1"]
    assert folders_to_make("/r", "/r/o-7.log") == []
    assert folders_to_make("/", "/job/o.log") == ["/job"]
    for name in ("..", "."):  # a job's name, filled in as %x
        with pytest.raises(ValueError, match=rf"^\{name}$"):
            folders_to_make("/r/runs", f"/r/runs/{name}/out.log")


def test_an_attempt_is_told_the_fixed_folder_of_each_file() -> None:
    spec = JobSpec(command="true", cwd="/", output="/r/%j/o.log", error="/r/e.log")
    files = attempt_files_for(spec, 7, 1)
    assert launch_files(files, written=set(), spec=spec) == (
        OutputFile("/r/7/o.log", emptied=True, fixed="/r"),
        OutputFile("/r/e.log", emptied=True, fixed="/r"),
    )
    assert launch_files(files, written=set()) == (  # no job: nothing made
        OutputFile("/r/7/o.log", emptied=True),
        OutputFile("/r/e.log", emptied=True),
    )
