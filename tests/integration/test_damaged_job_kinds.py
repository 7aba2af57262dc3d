"""Text in a whole-number column of herd.db (`sqlite3 herd.db "UPDATE jobs SET priority =
'high' ..."`: SQLite keeps it as it is) stopped every job in the queue: each pass of the
scheduler failed (`TypeError: '<' not supported between instances of 'int' and 'str'`), no
job named; and `show` of a job whose GPU count was text printed a traceback. Such a row is
damaged as one that does not parse is (test_damaged_job_row.py): its job is set aside, named
in daemon.log and by `show` in one line, and the other jobs run."""

from __future__ import annotations

import sqlite3

from test_damaged_job_row import SAID, daemon_log, set_column

from conftest import Herd

DAMAGES = (
    # (column, the value written by hand, why the row cannot be read, a value to set back)
    ("priority", "high", "priority: 'high', not a whole number", "5"),
    ("gpus", "x", "gpus: 'x', not a whole number", "1"),
    ("mem", "lots", "mem: 'lots', not a whole number", "1"),
    ("timeout", "soon", "timeout: 'soon', not a number", "600"),
)


def test_text_in_number_columns_sets_those_jobs_aside_and_the_others_run(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    damaged = [herd.submit("--priority", "5", "--", "true") for _ in DAMAGES]  # (read first)
    others = [herd.submit("--", "true") for _ in range(2)]
    for job, (column, value, _, _) in zip(damaged, DAMAGES, strict=True):
        set_column(herd, job, column, value)
    herd.cli("resume")
    for job in others:
        assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    log = daemon_log(herd)
    fate = "not started until its row is set back; the other jobs go on"
    for job, (_, _, why, _) in zip(damaged, DAMAGES, strict=True):
        line = f"{SAID.format(job=job, why=why)}; job {job} is set aside, {fate}\n"
        assert log.count(line) == 1, log
        shown = herd.cli("show", str(job), check=False)  # (gpus: a traceback as it printed)
        assert (shown.returncode, shown.stdout) == (1, ""), shown
        assert shown.stderr == f"gpuherd: error: {SAID.format(job=job, why=why)}\n"
    assert "engine pass failed" not in log and "Traceback" not in log
    assert herd.json("daemon", "status")["scheduler_failing"] is None
    listed = herd.cli("ls", "--all", check=False)
    assert listed.returncode == 1, listed
    ids = ", ".join(map(str, damaged))
    assert listed.stderr.startswith(f"gpuherd: error: jobs {ids} are not listed: "), listed
    held = herd.submit("--hold", "--", "true")  # (a move to the front read 'high': ValueError)
    assert herd.cli("move", str(held), "--first").returncode == 0
    herd.cli("rm", str(held))

    for job, (column, _, _, back) in zip(damaged, DAMAGES, strict=True):
        set_column(herd, job, column, back)  # set back: they run, nobody waking the daemon
    for job in damaged:
        assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"


def test_a_damaged_attempt_row_is_named_by_show_and_by_a_refused_start(herd: Herd) -> None:
    """An attempt's `gpus` that is no JSON list: `show` said `internal error`, and a daemon
    start whose recovery read it said only `Expecting value: line 1 column 1 (char 0)`."""
    herd.start("--fake-gpus", "1")
    ended = herd.submit("--", "true")
    herd.wait_state(ended, "succeeded")
    running = herd.submit("--", "sleep", "300")
    herd.wait_state(running, "running")
    said = SAID.replace("'s row in", "'s attempt 1 in")
    why = "Expecting value: line 1 column 1 (char 0)"
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute("UPDATE attempts SET gpus = 'x' WHERE job_id = ?", (ended,))
    db.close()
    shown = herd.cli("show", str(ended), check=False)
    assert (shown.returncode, shown.stdout) == (1, ""), shown
    assert shown.stderr == f"gpuherd: error: {said.format(job=ended, why=why)}\n"

    herd.cli("daemon", "stop")  # (job `running` goes on)
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute("UPDATE attempts SET gpus = 'x' WHERE job_id = ?", (running,))
    db.close()
    start = herd.cli("daemon", "start", check=False)
    assert start.returncode == 1, start
    assert start.stderr == f"gpuherd: error: {said.format(job=running, why=why)}\n", start
    with sqlite3.connect(herd.home / "herd.db") as db:  # set back, as the line says
        db.execute("UPDATE attempts SET gpus = '[0]' WHERE job_id = ?", (running,))
    db.close()
    herd.start()
    assert herd.job(running)["state"] == "running"
    herd.cli("kill", str(running))
