"""`gpuherd ls` for a researcher's history and for scripts, as Slurm's `sacct -S WHEN -o
COLUMNS -P` and `squeue -o` give them: a time window (--since, --until), the columns chosen
(--columns), CSV (--csv), and a listing kept up to date (--watch); and what each refuses."""

from __future__ import annotations

import csv
import io
import signal
import time
from datetime import datetime
from pathlib import Path
from uuid import uuid4

from conftest import Herd, read_line, wait_for
from integration.test_gpu_table_width import screen


def _moment(at: float) -> str:
    """`at` as --since takes a date and time (local, to the microsecond)."""
    return datetime.fromtimestamp(at).isoformat()


def _ids(herd: Herd, *args: str) -> list[int]:
    return [int(word) for word in herd.cli("ls", "-q", *args).stdout.split()]


def test_since_and_until_pick_the_jobs_in_the_queue_then(shared_daemon: Herd, tmp_path: Path):
    herd, project, go = shared_daemon, f"p{uuid4().hex[:8]}", tmp_path / "go"
    mine = ("--project", project)
    early = herd.submit(*mine, "--", "true")
    held = herd.submit(*mine, "--hold", "--", "true")  # submitted before, waiting since
    ended = herd.wait_state(early, "succeeded")["ended_at"]
    cut = max(ended, herd.job(held)["created_at"]) + 0.001
    wait_for(lambda: time.time() > cut + 0.01, what="the clock to pass the cut")
    failed = herd.submit(*mine, "--", "exit 3")
    herd.wait_state(failed, "failed")
    running = herd.submit(*mine, "--", f"while [ ! -e {go} ]; do sleep 0.02; done")
    herd.wait_state(running, "running")

    # --since: the jobs in the queue at some moment since then: ended since (finished ones
    # too, without --all), or not ended; the job that ended before it is left out.
    assert _ids(herd, *mine, "--since", _moment(cut)) == [failed, running, held]
    table = herd.cli("ls", *mine, "--since", _moment(cut)).stdout.splitlines()
    assert [line.split()[:2] for line in table[1:]] == [
        [str(failed), "failed"],
        [str(running), "running"],
        [str(held), "held"],
    ]
    only_failed = herd.json("ls", *mine, "--since", _moment(cut), "--state", "failed")
    assert [job["id"] for job in only_failed] == [failed]
    # --until: the jobs submitted by then.
    assert _ids(herd, *mine, "--until", _moment(cut)) == [early, held]
    assert _ids(herd, *mine, "--since", "1h") == [early, failed, running, held]
    assert _ids(herd, *mine, "--since", "today", "--until", "now") == [
        early, failed, running, held
    ]  # fmt: skip
    # Both: the jobs in the queue at some moment between the two.
    assert _ids(herd, *mine, "--since", _moment(cut), "--until", _moment(cut + 0.001)) == [held]
    assert herd.cli("ls", *mine, "--since", "2h", "--until", _moment(cut - 3600)).stdout == (
        "no jobs match\n"
    )
    go.touch()


def test_columns_and_csv_give_the_fields_chosen(shared_daemon: Herd) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    ok = herd.submit("--project", project, "-n", "ok", "--", "echo 'a,\"b\"'")
    bad = herd.submit("--project", project, "-n", "bad", "--", "exit 3")
    herd.wait_state(ok, "succeeded")
    herd.wait_state(bad, "failed")
    mine = ("--all", "--project", project)
    shown = herd.cli("ls", *mine, "--columns", "id,name,state,exit,project,info")
    assert shown.stdout.splitlines() == [
        "ID  NAME  STATE      EXIT  PROJECT    INFO",
        f"{ok:<2}  ok    succeeded  0     {project}  exit 0",
        f"{bad:<2}  bad   failed     3     {project}  exit 3",
    ]
    upper = herd.cli("ls", *mine, "--columns", "ID, Time,submitted,ended").stdout.splitlines()
    assert upper[0].split() == ["ID", "TIME", "SUBMITTED", "ENDED"]

    # CSV: a header of the fields, the values --json gives (seconds, epoch seconds).
    given = {job["id"]: job for job in herd.json("ls", *mine)}
    chosen = "id,name,state,time,exit,gpus,submitted,command"
    rows = list(csv.reader(io.StringIO(herd.cli("ls", *mine, "--csv", "--columns", chosen).stdout)))
    assert rows[0] == [
        "id",
        "name",
        "state",
        "seconds",
        "exit_code",
        "gpus",
        "created_at",
        "command",
    ]
    for row in rows[1:]:
        job = given[int(row[0])]
        assert row[1:3] == [job["name"], job["state"]]
        assert float(row[3]) == round(job["seconds"], 3)
        assert row[4] == str(job["exit_code"])
        assert row[5] == ",".join(map(str, job["gpus"]))
        assert float(row[6]) == round(job["created_at"], 3)
        assert row[7] == job["command"]  # quoted as CSV quotes, read back whole
    assert [int(row[0]) for row in rows[1:]] == [ok, bad]
    plain_csv = herd.cli("ls", *mine, "--csv").stdout.splitlines()
    assert plain_csv[0] == "id,state,name,gpus,priority,seconds,info,command"
    assert len(plain_csv) == 3
    empty = herd.cli("ls", "--project", project, "--state", "lost", "--csv").stdout
    assert empty.splitlines() == [plain_csv[0]]  # a header alone


def test_watch_piped_appends_each_reading_and_follows_changes(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, project, go = shared_daemon, f"p{uuid4().hex[:8]}", tmp_path / "go"
    job = herd.submit("--project", project, "--", f"while [ ! -e {go} ]; do sleep 0.02; done")
    herd.wait_state(job, "running")
    args = ("ls", "--all", "--project", project, "--columns", "id,state")
    once = herd.cli(*args).stdout.splitlines()
    assert once == ["ID  STATE", f"{job:<2}  running"]
    proc = herd.popen(*args, "--watch")
    assert proc.stdout is not None
    buffer = bytearray()
    try:
        first = [read_line(proc.stdout.fileno(), buffer).decode() for _ in range(len(once) + 1)]
        assert first == [*once, ""]  # a reading as `ls` prints it, a blank line after it
        go.touch()
        herd.wait_state(job, "succeeded")
        ended = f"{job:<2}  succeeded"  # read again: it ended meanwhile
        seen = [read_line(proc.stdout.fileno(), buffer).decode()]
        while ended not in seen and len(seen) < 3 * len(first):  # (the next reading, or so)
            seen.append(read_line(proc.stdout.fileno(), buffer).decode())
        assert seen[-2:] == ["ID  STATE", ended]
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as `--watch` is ended
        proc.communicate(timeout=15)


def test_watch_at_a_terminal_draws_the_table(shared_daemon: Herd) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    first = herd.submit("--project", project, "--hold", "-n", "first", "--", "true")
    herd.submit("--project", project, "--hold", "-n", "second", "--", "true")
    args = ["ls", "--project", project, "--columns", "id,name,state", "--watch"]
    lines = screen(herd, args, "first")
    assert lines == ["ID  NAME    STATE", f"{first:<2}  first   held"]


def test_ls_refuses_outputs_together_and_bad_values_in_one_line(herd: Herd) -> None:
    refused = {
        ("--csv", "--json"): "give --csv or --json, not both",
        ("--csv", "-q"): "give --csv or -q, not both",
        ("--watch", "--json"): "give --watch or --json, not both",
        ("-w", "--csv"): "give --watch or --csv, not both",
        ("--watch", "-q"): "give --watch or -q, not both",
        ("--columns", "id", "--json"): "--columns picks the table's or --csv's columns; "
        "--json prints every field",
        ("--columns", "id", "-q"): "--columns picks the table's or --csv's columns; -q prints "
        "the ids alone",
        ("--columns", "id,bogus"): "--columns: unknown column 'bogus': the columns are id, "
        "state, name, gpus, prio, time, info, command, project, sweep, git, exit, pid, submitted, "
        "started, ended, folder, stdout, stderr (e.g. --columns id,state,time)",
        ("--columns", ""): "--columns: no column in '': the columns are id, state",
        # (it said `no column in 'id,'`, which names one)
        ("--columns", "id,"): "--columns: 'id,' has an empty word (a comma too many?): the "
        "columns are id, state",
        ("--since", "soon"): "--since: invalid time 'soon': use a time ago (2d, 12h, 30m), "
        "today, yesterday, a time of day (23:30) or a date (2026-11-20, 2026-11-20T14:00)",
        ("--until", "25:00"): "--until: invalid time '25:00': no such time of day; ",
        ("--since", "2099-01-01"): "--since 2099-01-01 00:00 is in the future: give a past "
        "moment (2d: 2 days ago, yesterday, 23:30: the last 23:30)",
        ("--since", "1h", "--until", "2h"): "--since ",
    }
    for args, said in refused.items():
        assert herd.usage_error("ls", *args).startswith(f"gpuherd: error: {said}"), args
    window = herd.usage_error("ls", "--since", "1h", "--until", "2h")
    assert ": give the earlier moment to --since (see gpuherd ls --help)" in window
    assert " is after --until " in window
