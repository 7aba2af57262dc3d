"""Each attempt's own `--output` / `--error` files, recorded as it starts: an `edit` of a job
that ran (`--output`, or `--name` where `%x` names its files) changes its next attempts'
files, and `log --attempt N` and `show` still find where each earlier attempt wrote."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd

FIRST_FAILS = (
    "if [ -e ran-$GPUHERD_JOB_ID ]; then echo second; "
    "else touch ran-$GPUHERD_JOB_ID; echo first; exit 3; fi"
)


def failed_once(herd: Herd, work: Path, *args: str) -> int:
    """A job submitted from `work` that prints `first` and fails, put back held by `retry
    --hold` (its next attempt prints `second` and succeeds)."""
    job = int(herd.cli("submit", "-q", *args, FIRST_FAILS, cwd=work).stdout.split()[0])
    herd.wait_state(job, "failed")
    herd.cli("retry", "--hold", str(job))
    return job


def test_an_edit_after_a_run_changes_the_next_attempts_files_only(
    daemon: Herd, tmp_path: Path
) -> None:
    herd, work = daemon, tmp_path / "work"
    work.mkdir()
    named = failed_once(herd, work, "-n", "first", "-o", "out-%x.log")
    moved = failed_once(herd, work, "-o", "fixed.log")
    (work / "new.log").write_text("stale\n")  # a file new to the job: its first writer empties it
    assert herd.cli("edit", str(named), "--name", "other").stdout == (
        f"job {named}: edited (name first -> other)\n"
    )
    assert herd.cli("edit", str(moved), "-o", "new.log").returncode == 0
    # The files of attempt 1 come from the database, not the daemon's memory.
    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "4")
    herd.cli("release", str(named), str(moved))
    for job in (named, moved):
        herd.wait_state(job, "succeeded")
    assert (work / "out-first.log").read_text() == "first\n"
    assert (work / "out-other.log").read_text() == "second\n"
    assert (work / "fixed.log").read_text() == "first\n"
    assert (work / "new.log").read_text() == "second\n"
    files = {named: ("out-first.log", "out-other.log"), moved: ("fixed.log", "new.log")}
    for job, (before, after) in files.items():
        assert herd.cli("log", str(job), "--attempt", "1").stdout == "first\n"
        assert herd.cli("log", str(job), "--attempt", "2").stdout == "second\n"
        assert herd.cli("log", str(job)).stdout == "second\n"
        assert herd.cli("log", str(job), "--attempt", "1", "--stderr").stdout == "first\n"
        shown = json.loads(herd.cli("show", str(job), "--json").stdout)
        assert [a["log_files"] for a in shown["attempts"]] == [
            {"stdout": str(work / name), "stderr": str(work / name)} for name in (before, after)
        ]
        assert shown["log_files"] == {"stdout": str(work / after), "stderr": str(work / after)}
    # Back in its folder: the next attempt's logs are its own again, the earlier ones kept.
    herd.cli("retry", "--hold", str(moved))
    herd.cli("edit", str(moved), "--clear", "output")
    herd.cli("release", str(moved))
    herd.wait_state(moved, "succeeded")
    assert herd.cli("log", str(moved), "--attempt", "3").stdout == "second\n"
    assert herd.cli("log", str(moved), "--attempt", "2").stdout == "second\n"
    assert (work / "new.log").read_text() == "second\n"
    folder = herd.home / "jobs" / str(moved) / "attempt-3"
    assert not (folder / "stdout.log").is_symlink()


def test_a_rename_giving_two_jobs_one_file_is_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """As `edit --output` on several jobs: each first attempt would empty the other's file."""
    herd = shared_daemon
    first, second = (
        int(herd.cli("submit", "-q", "--hold", "-n", name, "-o", "n-%x.log", "true",
                     cwd=shared_work).stdout)
        for name in ("a", "b")
    )  # fmt: skip
    ids = f"{first},{second}"
    refused = herd.cli("edit", ids, "--name", "same", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: jobs {first} and {second} would both write "
        f"{shared_work}/n-same.log, each emptying it as it starts: give each a name of its "
        "own, or put %j (the job's id) in the file's name\n",
    )
    assert herd.cli("edit", ids, "--clear", "name", check=False).returncode == 1  # both `job`
    assert (herd.job(first)["name"], herd.job(second)["name"]) == ("a", "b")
    # A name that names no file is only a name; one job renamed alone writes its own file.
    plain = int(herd.cli("submit", "-q", "--hold", "-n", "c", "true").stdout)
    herd.cli("edit", f"{first},{plain}", "--name", "same")
    assert herd.job(first)["name"] == "same" and herd.job(plain)["name"] == "same"
