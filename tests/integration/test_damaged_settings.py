"""A setting herd.db keeps for the next daemon start, damaged (a crash, a hand edit), stopped
`gpuherd daemon start` with Python's words: `Expecting value: line 1 column 1 (char 0)`,
`'list' object has no attribute 'get'` (as "a bug"), `'weird' is not a valid DeviceState`. The
executor's and the GPUs' rows are now refused in one line that names the row, the value found
and the start that saves it again, the queue untouched; the rows a safe value replaces without
losing anything (a GPU's row, the removed GPUs, the hooks' mark, the pause) are put right, with
a warning in daemon.log (saved_settings.py, start_mends.py, daemon_executor.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd

REFUSED_EXECUTOR = (
    "gpuherd: error: herd.db's `executor` setting is damaged (found {found}: {why}), and 1 job "
    "still runs on the executor it named: start on the one it runs on, `gpuherd daemon start "
    "--executor local` (this machine) or `gpuherd daemon start --executor ray --address "
    "HOST:PORT` (a Ray cluster), which saves it again\n"
)
NAME_THE_GPUS = (
    "start with the GPUs to use, `gpuherd daemon start --gpus 0,1` (or --fake-gpus N without "
    "GPUs), which saves them again"
)


def run_sql(herd: Herd, statement: str, *values: object) -> None:
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute(statement, values)
    db.close()


def set_setting(herd: Herd, key: str, value: str) -> None:
    run_sql(herd, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", key, value)


def table(herd: Herd, name: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(herd.home / "herd.db") as db:
        rows = db.execute(f"SELECT * FROM {name} ORDER BY 1").fetchall()
    db.close()
    return rows


def refused(herd: Herd, *options: str) -> str:
    """`daemon start OPTIONS` refused: exit 1, nothing on stdout, no traceback, no daemon;
    its stderr."""
    start = herd.cli("daemon", "start", *options, check=False)
    assert (start.returncode, start.stdout) == (1, ""), start
    assert "Traceback" not in start.stderr + (herd.home / "daemon.log").read_text()
    assert len(start.stderr.splitlines()) == 1, start.stderr
    assert not herd.is_up()
    return start.stderr


def stopped_with_a_job_running(herd: Herd, go: Path) -> int:
    """A daemon on 2 fake GPUs that stopped while its job (returned) runs on."""
    herd.start("--fake-gpus", "2")
    job = herd.running_until(go)
    herd.cli("daemon", "stop")  # (its job goes on, for the next daemon to re-attach to)
    return job


def refused_under_a_running_job(
    herd: Herd, go: Path, key: str, value: str, *starts: tuple[str, ...]
) -> tuple[int, list[str]]:
    """The setting `key` damaged (`value`) while a job runs: each start of `starts` (their
    options) refused, the jobs table untouched; the job and what each start said."""
    job = stopped_with_a_job_running(herd, go)
    set_setting(herd, key, value)
    jobs = table(herd, "jobs")
    said = [refused(herd, *options) for options in starts]
    assert table(herd, "jobs") == jobs
    return job, said


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "not valid JSON: it stops mid-value at line 1, column 1 (cut off, or still being "
         "written?)"),
        ("[1]", 'not an object like {"kind": "local"}'),
        ('{"kind": "weird"}', "its kind is neither local nor ray"),
        ('{"kind": "ray"}', "no Ray cluster's address in it"),
    ],
)  # fmt: skip
def test_a_damaged_executor_is_refused_while_a_job_runs_where_it_said(
    herd: Herd, tmp_path: Path, value: str, why: str
) -> None:
    # A guess (local) would have counted a job on a Ray cluster lost, and run its retries.
    # (GPU options do not say where jobs run: refused too)
    job, said = refused_under_a_running_job(
        herd, tmp_path / "go", "executor", value, (), ("--fake-gpus", "2")
    )
    assert said == [REFUSED_EXECUTOR.format(found=repr(value), why=why)] * 2

    herd.start("--executor", "local")  # the way out it names: the row is saved again
    assert herd.job(job)["state"] == "running"  # re-attached, not lost
    assert table(herd, "meta").count(("executor", '{"kind": "local", "address": null}')) == 1
    (tmp_path / "go").touch()
    assert herd.wait_state(job, "succeeded")["attempt"] == 1


def test_a_damaged_executor_with_no_job_running_is_replaced_with_a_warning(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    held = herd.submit("--hold", "--", "true")
    herd.cli("daemon", "stop")
    set_setting(herd, "executor", "x")
    herd.start()  # nothing runs anywhere: nothing to lose; the GPUs are the last start's
    assert herd.job(held)["state"] == "held"
    assert [g["index"] for g in herd.json("gpus")["gpus"]] == [0, 1]
    assert (
        "WARNING gpuherd.daemon: herd.db's `executor` setting is damaged (found 'x': not valid "
        "JSON at line 1, column 1: Expecting value): replaced by this start's executor\n"
    ) in (herd.home / "daemon.log").read_text()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("x", "herd.db's `probe` setting is damaged (found 'x': not valid JSON at line 1, "
         f"column 1: Expecting value): {NAME_THE_GPUS}"),
        ('{"gpus": 5}', "herd.db's `probe` setting is damaged (found '{\"gpus\": 5}': its gpus "
         f"or fake_gpus is not a string): {NAME_THE_GPUS}"),
        ('{"fake_gpus": "zz"}', "the GPUs the last start used (herd.db's `probe` setting: "
         "'{\"gpus\": null, \"fake_gpus\": \"zz\"}') cannot be used: --fake-gpus: invalid item "
         "'zz': use a count (4), sizes (2x24GiB,1x80GiB) or a .json state file; "
         f"{NAME_THE_GPUS}"),
    ],
)  # fmt: skip
def test_damaged_gpus_are_refused_until_a_start_names_them(
    herd: Herd, tmp_path: Path, value: str, said: str
) -> None:
    # A guess (the GPUs NVML finds) could put jobs on a GPU the user had left out.
    job, refusals = refused_under_a_running_job(herd, tmp_path / "go", "probe", value, ())
    assert refusals == [f"gpuherd: error: {said}\n"]

    herd.start("--fake-gpus", "2")  # the way out it names
    assert herd.job(job)["state"] == "running"
    herd.cli("daemon", "stop")
    herd.start()  # saved again: a start without options takes it
    assert herd.job(job)["state"] == "running"


def test_a_damaged_gpu_row_is_drained_or_given_one_slot_with_a_warning(
    herd: Herd, tmp_path: Path
) -> None:
    job = stopped_with_a_job_running(herd, tmp_path / "go")
    run_sql(herd, "UPDATE devices SET state = 'weird' WHERE idx = 1")
    run_sql(herd, "UPDATE devices SET slots = 'abc' WHERE idx = 0")
    herd.start()
    assert herd.job(job)["state"] == "running"
    gpus = {g["index"]: g for g in herd.json("gpus")["gpus"]}
    assert (gpus[0]["state"], gpus[0]["slots"]) == ("enabled", 1)
    assert gpus[1]["state"] == "draining"  # no guess puts jobs on it: its jobs go on
    logged = (herd.home / "daemon.log").read_text()
    assert (
        "WARNING gpuherd.daemon: GPU 1's row in herd.db's devices table is damaged (state "
        "'weird'): drained (running jobs go on, nothing new starts there): `gpuherd gpus "
        "enable 1` uses it again\n"
    ) in logged
    assert (
        "WARNING gpuherd.daemon: GPU 0's row in herd.db's devices table is damaged (slots "
        "'abc'): 1 slot: `gpuherd gpus add 0 --slots N` gives it more\n"
    ) in logged
    herd.cli("gpus", "enable", "1")  # the way out it names
    assert {g["state"] for g in herd.json("gpus")["gpus"]} == {"enabled"}


@pytest.mark.parametrize(
    ("key", "value", "warned"),
    [
        ("removed_gpus", "[1]", "not an object like {\"1\": [1, null]}): forgotten (GPUs "
         "removed before stay out until a start's --gpus or --fake-gpus names them; `gpuherd "
         "gpus remove N` removes one again)"),
        ("hooks.through", "abc", "not a time in seconds): the on-end command runs for jobs "
         "that end from now on, not for those that ended while no daemon ran"),
        ("queue_paused", "yes", "neither 1 (paused) nor 0): the queue is paused, which starts "
         "no job by a guess: `gpuherd resume` dispatches"),
    ],
)  # fmt: skip
def test_a_damaged_setting_that_a_safe_value_replaces_is_mended_with_a_warning(
    herd: Herd, key: str, value: str, warned: str
) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("config", "set", "on-end", "true")  # (its mark is read at start once it is set)
    herd.cli("daemon", "stop")
    set_setting(herd, key, value)
    herd.start()
    assert (
        f"WARNING gpuherd.daemon: herd.db's `{key}` setting is damaged (found {value!r}: {warned}\n"
    ) in (herd.home / "daemon.log").read_text()
    assert herd.json("daemon", "status")["queue_paused"] is (key == "queue_paused")
    job = herd.submit("--", "true")
    if key == "queue_paused":
        herd.cli("resume")  # the way out it names
    assert herd.wait_state(job, "succeeded")["exit_code"] == 0
