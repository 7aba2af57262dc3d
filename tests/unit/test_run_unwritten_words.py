"""The line `gpuherd run` ends with when some jobs' ends could not be recorded in their
folders: every folder counted, the first five named in input order, and the way out that fits
the error (it always said to free some space, and that the logs may be cut short, also of a
folder removed by a job and of a job that never started)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from gpuherd.runner_summary import unwritten_words


def error(number: int) -> OSError:
    return OSError(number, os.strerror(number))


FULL = error(errno.ENOSPC)


def ran(out: Path, *folders: str) -> Path:
    """`out` with the job folders of jobs that started (they wrote their logs there)."""
    for folder in folders:
        (out / folder).mkdir(parents=True)
        (out / folder / "stdout.log").write_text("")
    return out


def test_many_folders_are_counted_and_the_first_five_named_in_input_order(tmp_path: Path) -> None:
    folders = {f"job_{n}": FULL for n in (10, 2, 9, 1, 3, 11, 4)}
    out = ran(tmp_path / "runs", *folders)
    said = unwritten_words(folders, out)
    assert said == (
        f"the ends of 7 jobs could not be recorded in {out} (No space left on device): "
        "job_1, job_2, job_3, job_4, job_9 and 2 more have no job.json or SUCCESS/FAILURE, "
        "and their logs may be cut short; free some space, then run again with "
        "--skip-succeeded, which runs them again (as it does the jobs that failed)"
    )


def test_one_folder_is_named_alone(tmp_path: Path) -> None:
    out = ran(tmp_path / "runs", "job_0")
    said = unwritten_words({"job_0": FULL}, out)
    assert said == (
        f"the end of job_0 could not be recorded in {out} (No space left on device): it has no"
        " job.json or SUCCESS/FAILURE, and its logs may be cut short; free some space, then "
        "run again with --skip-succeeded, which runs it again (as it does the jobs that failed)"
    )


def test_a_job_that_never_started_has_no_logs_to_cut_short(tmp_path: Path) -> None:
    said = unwritten_words({"job_0": FULL}, tmp_path)  # (its folder could not be made)
    assert "logs" not in said, said
    assert "SUCCESS/FAILURE; free some space, then run again" in said, said


def test_a_folder_removed_as_the_run_ran_is_said_to_be_so(tmp_path: Path) -> None:
    gone = tmp_path / "runs"
    said = unwritten_words({"job_1": error(errno.ENOENT)}, gone)
    assert said == (
        f"the end of job_1 could not be recorded in {gone} (No such file or directory): it has "
        f"no job.json or SUCCESS/FAILURE; {gone} (or a job folder in it) was removed or moved "
        "as the run ran: keep it there, then run again with --skip-succeeded, which runs it "
        "again (as it does the jobs that failed)"
    )


def test_permissions_are_named_not_space(tmp_path: Path) -> None:
    out = ran(tmp_path / "runs", "job_0")
    for number in (errno.EACCES, errno.EPERM, errno.EROFS):
        said = unwritten_words({"job_0": error(number)}, out)
        assert f"; make {out} writable for you (its permissions, or a read-only mount), " in said
        assert "space" not in said and "logs" not in said, said


def test_a_quota_and_another_error_get_their_own_way_out(tmp_path: Path) -> None:
    out = ran(tmp_path / "runs", "job_0")
    said = unwritten_words({"job_0": error(errno.EDQUOT)}, out)
    assert "its logs may be cut short; free some space (or have your disk quota raised)," in said
    said = unwritten_words({"job_0": error(errno.EIO)}, out)
    assert f"(Input/output error): it has no job.json or SUCCESS/FAILURE; see that {out} " in said
