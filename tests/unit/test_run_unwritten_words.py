"""The line `gpuherd run` ends with when some jobs' ends could not be recorded in their
folders (a full disk): every folder counted, the first five named in input order."""

from __future__ import annotations

import errno
import os

from gpuherd.runner_summary import unwritten_words

FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_many_folders_are_counted_and_the_first_five_named_in_input_order() -> None:
    folders = {f"job_{n}": FULL for n in (10, 2, 9, 1, 3, 11, 4)}
    said = unwritten_words(folders, "runs")
    assert said.startswith(
        "the ends of 7 jobs could not be recorded in runs (No space left on device): "
        "job_1, job_2, job_3, job_4, job_9 and 2 more have no job.json or SUCCESS/FAILURE, "
    ), said
    assert said.endswith("which runs them again (as it does the jobs that failed)"), said


def test_one_folder_is_named_alone() -> None:
    said = unwritten_words({"job_0": FULL}, "runs")
    assert said.startswith("the end of job_0 could not be recorded in runs (No space"), said
