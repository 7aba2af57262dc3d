"""Edges of each attempt's own output files: an attempt begun before attempts recorded their
files (schema 10 added them, NULL for the older rows) keeps its own files through an edit of
the job's --output or --name (%x), as one that recorded them does."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import Herd

FIRST_FAILS = (
    "if [ -e ran-$GPUHERD_JOB_ID ]; then echo second; "
    "else touch ran-$GPUHERD_JOB_ID; echo first; exit 3; fi"
)


def forget_attempt_files(herd: Herd) -> None:
    """With the daemon stopped: every attempt as an older database has it (no files), as
    migration 10 leaves the attempts begun before it."""
    db = sqlite3.connect(herd.home / "herd.db")
    try:
        with db:
            db.execute("UPDATE attempts SET stdout_file = NULL, stderr_file = NULL")
    finally:
        db.close()


def test_an_edit_keeps_the_files_of_attempts_that_recorded_none(
    daemon: Herd, tmp_path: Path
) -> None:
    herd, work = daemon, tmp_path / "work"
    work.mkdir()
    moved = int(herd.cli("submit", "-q", "-o", "old.log", FIRST_FAILS, cwd=work).stdout)
    named = int(
        herd.cli("submit", "-q", "-n", "first", "-o", "out-%x.log", FIRST_FAILS, cwd=work).stdout
    )
    for job in (moved, named):
        herd.wait_state(job, "failed")
    herd.cli("daemon", "stop")
    forget_attempt_files(herd)
    herd.start("--fake-gpus", "4")
    herd.cli("retry", "--hold", str(moved), str(named))
    (work / "new.log").write_text("stale\n")  # new to the job: its first writer empties it
    herd.cli("edit", str(moved), "-o", "new.log")
    herd.cli("edit", str(named), "--name", "other")
    herd.cli("release", str(moved), str(named))
    for job in (moved, named):
        herd.wait_state(job, "succeeded")
    assert (work / "old.log").read_text() == "first\n"
    assert (work / "new.log").read_text() == "second\n"
    assert (work / "out-first.log").read_text() == "first\n"
    assert (work / "out-other.log").read_text() == "second\n"
    files = {moved: ("old.log", "new.log"), named: ("out-first.log", "out-other.log")}
    for job, (before, after) in files.items():
        assert herd.cli("log", str(job), "--attempt", "1").stdout == "first\n"
        assert herd.cli("log", str(job), "--attempt", "2").stdout == "second\n"
        shown = json.loads(herd.cli("show", str(job), "--json").stdout)
        assert [a["log_files"]["stdout"] for a in shown["attempts"]] == [
            str(work / before),
            str(work / after),
        ]


def test_an_edit_of_other_fields_leaves_attempts_without_files_as_they_are(
    daemon: Herd, tmp_path: Path
) -> None:
    # Only an edit that changes the job's files records the older attempts' (nothing else
    # changes where they are read from).
    herd, work = daemon, tmp_path / "work"
    work.mkdir()
    job = int(herd.cli("submit", "-q", "-o", "old-%a.log", FIRST_FAILS, cwd=work).stdout)
    herd.wait_state(job, "failed")
    herd.cli("daemon", "stop")
    forget_attempt_files(herd)
    herd.start("--fake-gpus", "4")
    herd.cli("retry", "--hold", str(job))
    herd.cli("edit", str(job), "--timeout", "1h")
    db = sqlite3.connect(herd.home / "herd.db")
    try:
        assert db.execute("SELECT stdout_file FROM attempts").fetchall() == [(None,)]
    finally:
        db.close()
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert herd.cli("log", str(job), "--attempt", "1").stdout == "first\n"
    assert (work / "old-2.log").read_text() == "second\n"
