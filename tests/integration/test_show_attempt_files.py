"""`gpuherd show` names, under each attempt's line, the files of the user's choosing that
attempt wrote (`--output`, `--error`): an edit between attempts (`--name` where `%x` names
the file, `--clear output`) changes them, and `show` named only the latest."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Herd


def attempts_block(herd: Herd, job: int) -> list[str]:
    """The lines of `show JOB` from `attempts` to `history` (not included), each attempt's
    own line cut to its number (`  1:`), and its host usage line to `host memory` (the
    numbers vary), the lines of its files whole."""
    lines = herd.cli("show", str(job)).stdout.splitlines()
    block = lines[lines.index("attempts") : lines.index("history")]
    cut = (re.sub(r"^(  \d+:) .*", r"\1", line) for line in block)
    return [re.sub(r"^( +host memory)\b.*", r"\1", line) for line in cut]


def run_again(herd: Herd, job: int, *edit: str) -> None:
    """`retry --hold`, `edit JOB EDIT...`, `release`: its next attempt fails too."""
    herd.cli("retry", "--hold", str(job))
    herd.cli("edit", str(job), *edit)
    herd.cli("release", str(job))
    herd.wait_state(job, "failed")


def test_show_names_each_attempts_files(shared_daemon: Herd, shared_work: Path) -> None:
    herd, work = shared_daemon, shared_work
    submit = ("submit", "-q", "--gpus", "0", "-n", "lr-0.1", "-o", "out-%x.log", "exit 1")
    job = int(herd.cli(*submit, cwd=work).stdout)
    herd.wait_state(job, "failed")
    run_again(herd, job, "--name", "lr-0.01")
    run_again(herd, job, "--clear", "output")  # attempt 3: in its folder, nothing named
    first, second = work / "out-lr-0.1.log", work / "out-lr-0.01.log"
    assert attempts_block(herd, job) == [
        "attempts",
        "  1:",
        "     host memory",
        f"     stdout  {first}",
        f"     stderr  {first} (with stdout)",
        "  2:",
        "     host memory",
        f"     stdout  {second}",
        f"     stderr  {second} (with stdout)",
        "  3:",
        "     host memory",
    ]


def test_show_names_an_error_file_alone_and_nothing_for_folder_logs(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    errors = int(herd.cli("submit", "-q", "--gpus", "0", "--retries", "1", "-e", "%j-%a.err",
                          "exit 2", cwd=work).stdout)  # fmt: skip
    in_folder = int(herd.cli("submit", "-q", "--gpus", "0", "--retries", "1", "exit 2").stdout)
    herd.wait_state(errors, "failed")
    herd.wait_state(in_folder, "failed")
    assert attempts_block(herd, errors) == [  # its stdout in its folder: not named
        "attempts",
        "  1:",
        "     host memory",
        f"     stderr  {work}/{errors}-1.err",
        "  2:",
        "     host memory",
        f"     stderr  {work}/{errors}-2.err",
    ]
    usage = "     host memory"
    assert attempts_block(herd, in_folder) == ["attempts", "  1:", usage, "  2:", usage]
