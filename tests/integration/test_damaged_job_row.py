"""A row of herd.db's `jobs` holding a value no gpuherd writes (herd.db changed by another
program) made every `ls`, the scheduler's every pass and every daemon start fail with the
parser's own words, naming nothing: `internal error (JSONDecodeError: Expecting property name
enclosed in double quotes: line 1 column 2 (char 1))`. `show` of the job now names it and the
way out. And the row costs its job alone: it is set aside (said once in daemon.log), not
started, the scheduler starts the others; `ls` lists the others and says which it could not
read (exit status 1); a daemon starts, holding the GPUs a running job's row says it runs on
and leaving its processes alone. Set back by hand, the job goes on."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psutil
import pytest

import gpuherd
from conftest import Herd, stays

SAID = (
    "job {job}'s row in herd.db holds a value gpuherd never writes ({why}): herd.db was "
    "changed by another program; set that value back (sqlite3), or put a backup of herd.db "
    "in its place (`gpuherd daemon backup` makes them)"
)
UNREADABLE_LIST = "Expecting value: line 1 column 2 (char 1)"
"""Why a row whose id list (`after`) is `[x` cannot be read."""


def set_column(herd: Herd, job: int, column: str, value: str) -> None:
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (value, job))
    db.close()


def daemon_log(herd: Herd) -> str:
    return (herd.home / "daemon.log").read_text()


def set_aside(job: int, fate: str) -> str:
    """The daemon log's line for a job set aside (its `after` unreadable)."""
    said = SAID.format(job=job, why=UNREADABLE_LIST)
    return f"{said}; job {job} is set aside, {fate}; the other jobs go on\n"


def runs(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_damaged_job_row_is_named_with_the_way_out(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    job = herd.submit("--hold", "--", "echo hi")
    set_column(herd, job, "env_overrides", "{x")
    why = "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    said = herd.cli("show", str(job), check=False)
    assert (said.returncode, said.stdout) == (1, ""), said
    assert said.stderr == "gpuherd: error: " + SAID.format(job=job, why=why) + "\n"

    set_column(herd, job, "env_overrides", "{}")
    set_column(herd, job, "state", "bogus")
    said = herd.cli("show", str(job), check=False)
    why = "'bogus' is not a valid JobState"
    assert said.stderr == "gpuherd: error: " + SAID.format(job=job, why=why) + "\n", said
    set_column(herd, job, "state", "held")
    herd.cli("release", str(job))
    assert herd.wait_state(job, "succeeded")["exit_code"] == 0


def test_the_scheduler_sets_a_damaged_queued_job_aside_and_starts_the_others(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    damaged = herd.submit("--priority", "5", "--", "true")  # (read first by every pass)
    others = [herd.submit("--", "true") for _ in range(2)]
    set_column(herd, damaged, "after", "[x")
    herd.cli("resume")
    others.append(herd.submit("--", "true"))  # (a pass more, after the others' ends)
    for job in others:
        assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    log = daemon_log(herd)
    assert log.count(set_aside(damaged, "not started until its row is set back")) == 1, log
    assert "engine pass failed" not in log
    assert herd.json("daemon", "status")["scheduler_failing"] is None

    set_column(herd, damaged, "after", "[]")  # set back: started, nobody waking the daemon
    assert herd.wait_state(damaged, "succeeded", "failed")["state"] == "succeeded"
    assert f"job {damaged}'s row in herd.db reads again" in daemon_log(herd)


def test_ls_lists_the_other_jobs_and_says_which_it_could_not_read(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    first, damaged, last = (herd.submit("--hold", "--", "true") for _ in range(3))
    set_column(herd, damaged, "after", "[x")
    line = f"gpuherd: error: {SAID.format(job=damaged, why=UNREADABLE_LIST)}; job {damaged}"
    for options in (
        (),
        ("--all",),
        ("--state", "held"),
        ("--json",),
        ("--csv",),
        ("-q", "--limit", "5"),
    ):
        said = herd.cli("ls", *options, check=False)
        assert (said.returncode, said.stderr) == (1, line + " is not listed\n"), options
        assert str(last) in said.stdout, options
    said = herd.cli("ls", "--json", check=False)
    assert [job["id"] for job in json.loads(said.stdout)] == [first, last]
    api = gpuherd.connect(herd.home, start=False)  # the Python API warns as `ls` says it
    with pytest.warns(UserWarning, match=rf"; job {damaged} is not listed$"):
        assert [job.id for job in api.jobs(all=True)] == [first, last]

    set_column(herd, first, "after", "[x")  # two: one line still
    said = herd.cli("ls", check=False)
    assert said.returncode == 1, said
    assert said.stderr == (
        f"gpuherd: error: jobs {first}, {damaged} are not listed: their rows in herd.db cannot"
        " be read (`gpuherd show ID` says why of each); "
        + SAID.format(job=first, why=UNREADABLE_LIST)
        + "\n"
    )
    page = herd.page("/jobs")  # the dashboard's jobs page: the others, and the same line
    assert f"jobs {first}, {damaged} are not listed: their rows in herd.db cannot" in page
    assert f'href="/jobs/{last}"' in page and f'href="/jobs/{damaged}"' not in page
    assert "<h2>Recent jobs" in herd.page("/")  # (its recent jobs: failed with a 500)
    for job in (first, damaged):
        set_column(herd, job, "after", "[]")
    said = herd.cli("ls")
    assert (said.returncode, said.stderr) == (0, "")


def test_the_jobs_pages_pager_counts_a_job_left_out(herd: Herd) -> None:
    # COUNT counts the damaged row, the table leaves it out: the pager said `1–2 of 3` and
    # offered an `older →` page, which was empty.
    herd.start("--fake-gpus", "1")
    jobs = [herd.submit("--hold", "--", "true") for _ in range(3)]
    set_column(herd, jobs[1], "after", "[x")
    page = herd.page("/jobs")
    assert f"job {jobs[1]} is not listed" in page
    assert "1–3 of 3, newest first" in page, page
    assert "older →" not in page


def test_a_damaged_running_jobs_end_is_recorded_once_its_row_is_set_back(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    go = tmp_path / "go"
    running = herd.running_until(go)
    set_column(herd, running, "after", "[x")
    go.touch()  # it ends: its end cannot be recorded, the other jobs go on
    after = herd.submit("--", "true")  # (on the one GPU, free once the job ended)
    assert herd.wait_state(after, "succeeded", "failed")["state"] == "succeeded"
    fate = "its end is recorded once its row is set back"
    assert daemon_log(herd).count(set_aside(running, fate)) == 1

    set_column(herd, running, "after", "[]")
    assert herd.wait_state(running, "succeeded", "failed")["state"] == "succeeded"


def test_a_daemon_starts_beside_a_damaged_running_row_holding_its_gpu(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    go = tmp_path / "go"
    running = herd.running_until(go)
    seen = herd.job(running)
    herd.cli("daemon", "stop")  # (its job goes on, for the next daemon to re-attach to)
    set_column(herd, running, "after", "[x")
    herd.start("--fake-gpus", "2")  # each start failed, naming the job
    fate = f"not watched; the GPUs its row says it runs on ({seen['gpus'][0]}) are held"
    fate += "; set it back, then `gpuherd daemon restart` re-attaches to the job"
    assert daemon_log(herd).count(set_aside(running, fate)) == 1
    beside = herd.submit("--", "true")
    done = herd.wait_state(beside, "succeeded", "failed")
    assert (done["state"], done["gpus"]) == ("succeeded", [1 - seen["gpus"][0]])
    # (a job's end sweeps what ended attempts left: the job set aside is not one of them)
    stays(lambda: runs(seen["pid"]), 1.0, "the job set aside running on")

    herd.cli("daemon", "stop")
    set_column(herd, running, "after", "[]")  # set back: the next daemon re-attaches to it
    herd.start("--fake-gpus", "2")
    go.touch()
    assert herd.wait_state(running, "succeeded", "failed")["attempt"] == 1


def test_a_damaged_environment_row_sets_aside_the_jobs_naming_it(herd: Herd) -> None:
    """An `envs` row that does not parse (JSONDecodeError, naming nothing, failed every pass
    and every `ls`): the jobs naming it are set aside, the others go on."""
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    damaged = herd.submit("--priority", "5", "--", "true")
    other = herd.submit("--", "true")
    with sqlite3.connect(herd.home / "herd.db") as db:  # (a row of its own: not the others')
        db.execute("INSERT INTO envs (id, hash, json) VALUES (999, 'damaged', '{x')")
    db.close()
    set_column(herd, damaged, "env_id", "999")
    herd.cli("resume")
    assert herd.wait_state(other, "succeeded", "failed")["state"] == "succeeded"
    why = "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    said = (
        "environment 999's row (table `envs`) in herd.db holds a value gpuherd never writes"
        f" ({why}): herd.db was changed by another program"
    )
    listed = herd.cli("ls", "--all", check=False)
    assert listed.returncode == 1 and said in listed.stderr, listed
    assert f"; job {damaged} is not listed\n" in listed.stderr
    assert f"; job {damaged} is set aside, not started" in daemon_log(herd)

    with sqlite3.connect(herd.home / "herd.db") as db:  # set back: the job itself unchanged
        db.execute("UPDATE envs SET json = '{}' WHERE id = 999")
    db.close()
    assert herd.wait_state(damaged, "succeeded", "failed")["state"] == "succeeded"
