"""The placeholders of `--output` and `--error` (core/output_files.py), and what the attempt
folder's links to those files tell a restart (executors/local_records.py)."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd.core.model import JobSpec
from gpuherd.core.output_files import (
    OutputFile,
    attempt_files_for,
    expand,
    launch_files,
    recorded_or_named,
    shared_file,
    template_problem,
)
from gpuherd.executors.local_records import signs_of_life


def test_placeholders_are_filled_in_and_unknown_ones_named() -> None:
    assert expand("/r/%x-%j.%a.log", 12, 3, "sweep/lr=1") == "/r/sweep_lr=1-12.3.log"
    assert expand("/r/%x%%a", 12, 3, None) == "/r/job%a"  # %% is a percent sign, not %a's
    assert template_problem("/r/%x-%j-%a-%%.log") is None
    assert template_problem("/r/%u.log") == (
        "unknown placeholder %u: use %j (the job's id), %a (the attempt's number), "
        "%x (the job's name), or %% for a percent sign"
    )
    # (it said "unknown placeholder a % at its end")
    assert template_problem("/r/100%").startswith("a % at its end: use %j (the job's id), ")


def test_a_file_is_emptied_by_the_first_attempt_to_write_it() -> None:
    spec = JobSpec(command="true", cwd="/", output="/r/o-%a.log", error="/r/e.log")
    first = attempt_files_for(spec, 5, 1)
    assert first == ("/r/o-1.log", "/r/e.log")
    assert launch_files(first, written=set()) == (
        OutputFile("/r/o-1.log", emptied=True),
        OutputFile("/r/e.log", emptied=True),
    )
    assert launch_files(attempt_files_for(spec, 5, 2), written=set(first)) == (
        OutputFile("/r/o-2.log", emptied=True),  # a file of its own
        OutputFile("/r/e.log", emptied=False),  # the one the attempt before wrote: added to
    )
    alone = JobSpec(command="true", cwd="/", output="/r/both.log")
    files = attempt_files_for(alone, 5, 1)
    assert launch_files(files, written=set()) == (OutputFile("/r/both.log", True),) * 2
    # Without a file of the user's choosing (or on Ray's executor): the folder's own logs.
    assert attempt_files_for(spec, 5, 1, user_files=False) == ("stdout.log", "stderr.log")
    assert launch_files(("stdout.log", "/r/e.log"), written=set()) == (
        None,
        OutputFile("/r/e.log", emptied=True),
    )


def test_an_attempt_reads_the_files_it_recorded_else_the_jobs() -> None:
    """An attempt begun before attempts recorded their files (None) has only the job's."""
    spec = JobSpec(command="true", cwd="/", name="now", output="/r/%x.log")
    assert recorded_or_named(spec, 5, 1, ("/r/then.log", "/r/then.log")) == (
        "/r/then.log",
        "/r/then.log",
    )
    assert recorded_or_named(spec, 5, 1, None) == ("/r/now.log", "/r/now.log")


def test_the_last_write_to_a_chosen_file_is_a_sign_of_life(tmp_path: Path) -> None:
    folder, chosen = tmp_path / "attempt-1", tmp_path / "out.log"
    folder.mkdir()
    (folder / "process").write_text("pid 1\n")
    chosen.write_text("output\n")
    (folder / "stdout.log").symlink_to(chosen)
    os.utime(folder / "process", (1000.0, 1000.0))
    os.utime(folder / "stdout.log", (1000.0, 1000.0), follow_symlinks=False)
    os.utime(chosen, (2000.0, 2000.0))
    assert signs_of_life(str(folder)).last_seen == 2000.0


def test_jobs_sharing_a_file_are_found_and_a_job_id_in_the_name_parts_them() -> None:
    def spec(name: str | None, output: str | None, error: str | None = None) -> JobSpec:
        return JobSpec(command="true", cwd="/", name=name, output=output, error=error)

    assert shared_file([spec(None, "/r/o-%j.log"), spec(None, "/r/o-%j.log")]) is None
    assert shared_file([spec("a", "/r/%x.log"), spec("b", "/r/%x.log")]) is None
    assert shared_file([spec(None, "/r/o.log", "/r/o.log"), spec(None, None)]) is None
    assert shared_file([spec(None, "/r/%%j.log"), spec(None, "/r/%%j.log")]) is not None
    clash = shared_file([spec("a", "/r/o.log"), spec("b", "/r/e.log", "/r/o.log")])
    assert clash == ("/r/o.log", 0, 1)
    assert shared_file([spec("a", "/r/%x.log"), spec("c", None), spec("a", "/r/a.log")]) == (
        "/r/a.log",
        0,
        2,
    )
