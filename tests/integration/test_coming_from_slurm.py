"""A Slurm user's habits, and the last of pueue's and task-spooler's: sacct's history for a
script (each job's run time in `ls --json`), and their commands, options and settings
answered with what they are called here."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import Herd, wait_for


def test_ls_json_gives_each_jobs_run_time_its_pauses_left_out(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """sacct's Elapsed: a script had to count it from started_at, ended_at and the pauses."""
    herd = shared_daemon
    go = tmp_path / "go"
    job = herd.running_until(go)
    waiting = herd.submit("--hold", "--", "true")
    herd.cli("pause", str(job))
    paused = herd.wait_state(job, "paused")
    wait_for(lambda: time.time() >= paused["paused_at"] + 1.0, 5, "a second of pause")
    herd.cli("resume", str(job))
    herd.wait_state(job, "running")
    go.touch()
    herd.wait_state(job, "succeeded")

    rows = {row["id"]: row for row in herd.json("ls", "--all")}
    ended = rows[job]
    assert ended["paused_seconds"] >= 1.0
    ran = ended["ended_at"] - ended["started_at"] - ended["paused_seconds"]
    assert ended["seconds"] == pytest.approx(ran)
    assert herd.json("show", str(job))["seconds"] == ended["seconds"]
    assert rows[waiting]["seconds"] is None  # not started: no run time


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["sacct"], "No such command 'sacct': gpuherd ls --all lists every job with its state"),
        (["scontrol", "hold", "3"], "No such command 'scontrol': gpuherd hold IDS and gpuherd"),
        (["send", "3", "y"], "No such command 'send': a job's standard input is /dev/null here"),
        (["-U", "3-4"], "No such option '-U': gpuherd move ID1 --swap ID2 swaps two waiting"),
        (["submit", "-t", "2:00:00", "--", "true"], "No such option '-t': use --timeout"),
        (["submit", "--signal=B:USR1@60", "--", "true"], "use --grace 60s: at its --timeout"),
        (["submit", "--requeue", "--", "true"], "No such option '--requeue': use --retries N"),
        (["submit", "--mail-type=END", "--", "true"], "gpuherd config set on-end CMD runs CMD"),
        (["submit", "--dependency=afternotok:3", "--", "true"], "--after-fail IDS (afternotok)"),
        (["submit", "--array=0-99%4", "true"], "-p i $(seq 0 99) --max-parallel 4 runs a job"),
        (["submit", "--print-task-id", "true"], "use --quiet (-q) to print only the job's id"),
        (["edit", "3", "--path", "/tmp"], "No such option '--path': use --cwd DIR"),
        (["log", "3", "--full"], "No such option '--full': leave it out: gpuherd log ID prints"),
    ],
)
def test_another_tools_word_is_answered_with_what_it_is_called_here(
    herd: Herd, args: list[str], said: str
) -> None:
    assert said in herd.usage_error(*args)  # (no daemon: refused before asking one)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("callback", "use on-end: gpuherd config set on-end CMD runs CMD each time a job ends "),
        ("TS_ONFINISH", "use on-end: gpuherd config set on-end CMD"),
        ("ts_slots", "use max-running: TS_SLOTS=4 is max-running 4 (task-spooler's TS_SLOTS)"),
    ],
)
def test_another_tools_setting_is_answered_with_the_one_that_does_its_job(
    shared_daemon: Herd, name: str, said: str
) -> None:
    assert said in shared_daemon.usage_error("config", "set", name, "4")
    assert said in shared_daemon.usage_error("config", "get", name)
