"""`gpuherd gpus` on an 80-column terminal (a tmux pane, an ssh window), plain and
`--watch`: every header and every value whole, foreign processes and held memory too, and
why a GPU is reserved for a held job's run."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from conftest import NO_SUCH_PIDS, Herd, read_line
from gpuherd.cli.plain import cells
from reliability.test_restored_database import CHECKPOINT, held_for_its_run

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NAME = "NVIDIA A100-SXM4-80GB"


def screen(herd: Herd, args: list[str], last: str) -> list[str]:
    """The lines `gpuherd ARGS` shows on an 80-column terminal, up to the one holding `last`
    (escape sequences left out); a command still running then (`--watch`) is interrupted."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**herd.env, "TERM": "xterm", "COLUMNS": "80"},
        start_new_session=True,
    )
    os.close(follower)
    lines: list[str] = []
    buffer = bytearray()
    try:
        while not lines or last not in lines[-1]:
            raw = read_line(leader, buffer).decode()
            lines.append(ESCAPES.sub("", raw).strip("\r"))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C, as `--watch` is ended
        proc.wait(timeout=15)
        os.close(leader)
    return lines


def test_gpus_fits_80_columns_with_every_header_and_value_whole(herd: Herd, tmp_path: Path) -> None:
    me, nobody = psutil.Process().username(), NO_SUCH_PIDS[0]
    state = tmp_path / "gpus.json"
    foreign = [{"pid": os.getpid(), "memory": "20GiB"}, {"pid": nobody, "memory": "1.5GiB"}]
    gpus = [
        {"name": NAME, "memory_total": "80GiB", "utilization": 97, "processes": foreign},
        {"name": NAME, "memory_total": "80GiB", "utilization": 5},
    ]
    state.write_text(json.dumps({"gpus": gpus}))
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--mem", "10GiB", "--", "sleep", "60")
    assert herd.wait_state(job, "running")["gpus"] == [1]  # GPU 0 has foreign processes

    plain = screen(herd, ["gpus"], "probe: ")
    assert plain == [
        "GPU  STATE    SLOTS  MEMORY                          HELD      UTIL  JOBS",
        "0    enabled  0/1    ███░░░░░░░ 21.5 GiB / 80.0 GiB            97%",
        f"     foreign: {os.getpid()} ({me}, 20.0 GiB), {nobody} (?, 1.5 GiB)",
        f"1    enabled  1/1    ░░░░░░░░░░ 0 B / 80.0 GiB       10.0 GiB  5%    {job}",
        f"GPUs 0-1: {NAME}",
        f"probe: fake: state file {state}",
    ]
    assert max(cells(line) for line in plain[:-1]) <= 80  # (the probe names a long path)
    # `--watch` draws the same table by the same rule (its first frame, up to the probe's
    # line, which it ends only when it redraws).
    watched = screen(herd, ["gpus", "--watch"], f"GPUs 0-1: {NAME}")
    assert watched == plain[:-1]

    # Piped (cut at 200 columns), the table is whole in its one line per GPU, as before.
    piped = herd.cli("gpus").stdout.splitlines()
    assert piped[0].split() == [
        "GPU", "NAME", "STATE", "SLOTS", "MEMORY", "HELD", "UTIL", "JOBS", "FOREIGN"
    ]  # fmt: skip
    assert piped[1].endswith(f"97%         {os.getpid()} ({me}, 20.0 GiB), {nobody} (?, 1.5 GiB)")
    herd.cli("kill", str(job))


def test_a_gpu_kept_for_a_held_jobs_run_says_why_here_and_on_the_dashboard(
    herd: Herd, tmp_path: Path
) -> None:
    """herd.db restored from a backup that has the job queued, while it runs: held for its
    run, whose GPU stays reserved for it. `gpuherd gpus` (80 columns) and the dashboard's GPU
    page say for which job, and why (before: the job was in JOBS, the why in `--json` only)."""
    herd.start("--fake-gpus", "1")
    go, copy = tmp_path / "go", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", CHECKPOINT.format(go=go))
    job, pid = before["id"], before["pid"]  # its GPU is its environment's

    why = f"held: attempt 1 runs unwatched (pid {pid})"
    plain = screen(herd, ["gpus"], "probe: ")
    assert plain[1].split()[-1] == str(job)  # JOBS
    assert plain[-2] == f"GPU 0 is reserved for job {job}, {why}"
    assert max(cells(line) for line in plain[:-1]) <= 80
    page = herd.page("/gpus")
    assert f'GPU 0 is reserved for <a href="/jobs/{job}">job {job}</a>, {why}' in page
    go.touch()
    herd.wait_state(job, "succeeded")
    assert "reserved for" not in herd.page("/gpus")


def test_gpus_watch_piped_appends_each_reading_whole(herd: Herd, tmp_path: Path) -> None:
    """`gpus --watch > gpus.log` (or `| tee`): each reading is appended as `gpus` prints it
    piped, whole at 200 columns. Before, rich's Live wrote nothing until Ctrl-C, then one
    frame cut at 80 columns (FOREIGN was `FORE`)."""
    state = tmp_path / "gpus.json"
    first, second = NO_SUCH_PIDS[:2]
    foreign = [{"pid": first, "memory": "20GiB"}, {"pid": second, "memory": "1.5GiB"}]
    gpus = [{"name": NAME, "memory_total": "80GiB", "processes": foreign}]
    state.write_text(json.dumps({"gpus": gpus}))
    herd.start("--fake-gpus", str(state))
    once = herd.cli("gpus").stdout.splitlines()
    assert once[1].endswith(f"{first} (?, 20.0 GiB), {second} (?, 1.5 GiB)")

    proc = herd.popen("gpus", "--watch")
    assert proc.stdout is not None
    buffer = bytearray()
    try:
        # Two readings, one after the other, each line as `gpus` prints it.
        lines = [read_line(proc.stdout.fileno(), buffer).decode() for _ in range(2 * len(once) + 1)]
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as `--watch` is ended
        proc.communicate(timeout=15)  # (closes the pipes)
    assert lines == [*once, "", *once]


def test_gpus_refuses_watch_with_json_and_options_for_a_subcommand(herd: Herd) -> None:
    """Both were ignored in silence: `gpus --watch --json` drew the table, `gpus --json add 0`
    printed no JSON."""
    herd.start("--fake-gpus", "1")
    both = herd.cli("gpus", "--watch", "--json", check=False)
    assert both.returncode == 2
    assert both.stderr.startswith("gpuherd: error: give --watch or --json, not both: ")
    assert len(both.stderr.splitlines()) == 1
    misplaced = herd.cli("gpus", "--json", "drain", "0", check=False)
    assert (misplaced.returncode, misplaced.stderr.splitlines()) == (
        2,
        [
            "gpuherd: error: --json goes with `gpuherd gpus` alone, not with `gpus drain`: "
            "drop it (see gpuherd gpus --help)"
        ],
    )
    assert herd.json("gpus")["gpus"][0]["state"] == "enabled"  # not drained
