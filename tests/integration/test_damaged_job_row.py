"""A row of herd.db's `jobs` holding a value no gpuherd writes (herd.db changed by another
program) made every `ls`, the scheduler's every pass and every daemon start fail with the
parser's own words, naming nothing: `internal error (JSONDecodeError: Expecting property name
enclosed in double quotes: line 1 column 2 (char 1))`. They now name the job and the way out;
with the value set back, all goes on."""

from __future__ import annotations

import sqlite3

from conftest import Herd

SAID = (
    "job {job}'s row in herd.db holds a value gpuherd never writes ({why}): herd.db was "
    "changed by another program; set that value back (sqlite3), or put a backup of herd.db "
    "in its place (`gpuherd daemon backup` makes them)\n"
)


def set_column(herd: Herd, job: int, column: str, value: str) -> None:
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (value, job))
    db.close()


def test_a_damaged_job_row_is_named_with_the_way_out(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    job = herd.submit("--hold", "--", "echo hi")
    set_column(herd, job, "env_overrides", "{x")
    why = "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    for verb in (("ls",), ("show", str(job))):
        said = herd.cli(*verb, check=False)
        assert (said.returncode, said.stdout) == (1, ""), said
        assert said.stderr == "gpuherd: error: " + SAID.format(job=job, why=why)

    set_column(herd, job, "env_overrides", "{}")
    set_column(herd, job, "state", "bogus")
    said = herd.cli("show", str(job), check=False)
    why = "'bogus' is not a valid JobState"
    assert said.stderr == "gpuherd: error: " + SAID.format(job=job, why=why), said
    set_column(herd, job, "state", "held")

    # A running job's row is read as a daemon starts: each start failed in those words.
    running = herd.submit("--", "sleep 60")
    herd.wait_state(running, "running")
    herd.cli("daemon", "stop")  # (its job goes on, for the next daemon to re-attach to)
    set_column(herd, running, "assigned", "[0")
    start = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert start.returncode == 1, start
    why = "Expecting ',' delimiter: line 1 column 3 (char 2)"
    assert start.stderr.endswith(SAID.format(job=running, why=why)), start.stderr

    set_column(herd, running, "assigned", "[0]")  # set back: the queue is as it was
    herd.start("--fake-gpus", "1")
    herd.cli("kill", str(running))
    assert herd.wait_state(running, "killed")["attempt"] == 1
    herd.cli("release", str(job))
    assert herd.wait_state(job, "succeeded")["exit_code"] == 0
