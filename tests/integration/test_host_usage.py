"""Each attempt's host memory peak (the kernel's ru_maxrss of its largest process) and CPU
time (user + system of its processes), taken from the wait for its job shell: stored with
the attempt, shown by `show` (text, --json), the dashboard's job page and `gpuherd run`'s
job.json; null / "not measured" where the daemon did not wait for the shell itself (a job
re-attached after a restart, an attempt stored before this was measured)."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import GPUHERD_BIN, Herd, Runs, job_info
from gpuherd.core.units import format_size
from gpuherd.store_schema import MIGRATIONS

MIB = 2**20
PYTHON = shlex.quote(sys.executable)
ALLOCATE = f'{PYTHON} -c "b = bytearray(300 * 2**20); import time; time.sleep(0.2)"'
BURN = (  # (one line: `gpuherd run` reads a command a line)
    f'{PYTHON} -c "import time; t = time.process_time(); '
    "exec('while time.process_time() - t < 0.5: pass')\""
)
HOG = f"{ALLOCATE} && {BURN}"
"""Two processes the job shell forks and waits for, one after the other: its numbers are
theirs (the shell alone uses a few MiB and no CPU to speak of), so wait4's rusage of the
shell includes what it waited for. The largest process: the first; the CPU: mostly the
second."""

NOT_MEASURED = "host memory, CPU: not measured"


def attempt_line(shown: str, number: int) -> str:
    """The line under attempt `number`'s in `show`'s text: its host usage."""
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  {number}: "))
    return lines[at + 1].strip()


def test_a_jobs_host_memory_peak_and_cpu_time_are_measured_stored_and_shown(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    over = herd.submit("--gpus", "0", "--ram", "100MiB", HOG)
    fits = herd.submit("--gpus", "0", "--ram", "1GiB", HOG)
    small = herd.submit("--gpus", "0", "true")
    for job in (over, fits, small):
        assert herd.wait_state(job, "succeeded", "failed", timeout=60)["state"] == "succeeded"

    [measured] = herd.json("show", str(over))["attempts"]
    assert measured["peak_rss"] >= 300 * MIB, measured  # the first process's bytearray
    assert measured["peak_rss"] < 600 * MIB, measured  # the largest one, not a sum
    assert measured["cpu_time"] >= 0.45, measured  # the second one's busy loop
    assert measured["over_ram"] is True
    [fitting] = herd.json("show", str(fits))["attempts"]
    assert fitting["over_ram"] is False and fitting["peak_rss"] >= 300 * MIB

    peak = format_size(measured["peak_rss"])
    assert re.fullmatch(
        rf"host memory: asked 100\.0 MiB, peak {re.escape(peak)} \(more than declared\); "
        r"CPU \d+\.\ds",
        attempt_line(herd.cli("show", str(over)).stdout, 1),
    )
    assert re.fullmatch(
        r"host memory: asked 1\.0 GiB, peak \d+\.\d MiB; CPU \d+\.\ds",
        attempt_line(herd.cli("show", str(fits)).stdout, 1),
    )
    # A job smaller than the daemon: the kernel counts the daemon's peak in its shell's (the
    # exec after vfork), so its own is not told (it was the daemon's 54 MiB for `true`).
    [tiny] = herd.json("show", str(small))["attempts"]
    assert tiny["peak_rss"] is None and tiny["cpu_time"] < 0.5, tiny
    assert re.fullmatch(
        r"host memory: peak too small to measure; CPU 0\.\ds",
        attempt_line(herd.cli("show", str(small)).stdout, 1),
    )
    # The job's folder says so too, and the dashboard's job page.
    info = job_info(Path(herd.json("show", str(over))["job_dir"]))
    assert (info["peak_rss"], info["cpu_time"]) == (measured["peak_rss"], measured["cpu_time"])
    page = herd.page(f"/jobs/{over}")
    assert f'<td class="host-memory">{peak} <span class="warn"' in page
    assert "(more than declared)" in page


def test_a_job_re_attached_after_a_restart_is_not_measured(daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    job = daemon.running_until(go)
    daemon.cli("daemon", "restart")  # the job goes on; the new daemon is not its parent
    go.touch()
    assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded"

    [attempt] = daemon.json("show", str(job))["attempts"]
    assert (attempt["peak_rss"], attempt["cpu_time"], attempt["over_ram"]) == (None, None, False)
    assert attempt_line(daemon.cli("show", str(job)).stdout, 1) == NOT_MEASURED
    info = job_info(Path(daemon.json("show", str(job))["job_dir"]))
    assert (info["peak_rss"], info["cpu_time"]) == (None, None)
    assert 'class="muted" colspan="2">not measured</td>' in daemon.page(f"/jobs/{job}")


def test_an_attempt_stored_before_schema_13_reads_as_not_measured(herd: Herd) -> None:
    herd.home.mkdir(parents=True)
    db = sqlite3.connect(herd.home / "herd.db")
    for script in MIGRATIONS[:12]:  # the release before this measure
        db.executescript(script)
    db.execute("INSERT INTO envs(id, hash, json) VALUES (1, 'h', '{}')")
    db.execute(
        "INSERT INTO jobs(command, cwd, env_id, env_overrides, gpus, after, retries, grace,"
        " state, priority, position, attempt, created_at, queued_at, started_at, ended_at,"
        " outcome, exit_code) VALUES ('true', '/', 1, '{}', 1, '[]', 0, 10, 'succeeded', 0, 1,"
        " 1, 1e9, 1e9, 1e9, 1e9 + 5, 'exit', 0)"
    )
    db.execute(
        "INSERT INTO attempts(job_id, number, gpus, gpu_uuids, dir, host, started_at, pid,"
        " ended_at, outcome, exit_code, peak_mem) VALUES (1, 1, '[0]', '[]', ?, 'old-host',"
        " 1e9, 4242, 1e9 + 5, 'exit', 0, ?)",
        (str(herd.home / "jobs" / "1" / "attempt-1"), 3 * 2**30),
    )
    db.execute("PRAGMA user_version = 12")
    db.commit()
    db.close()
    herd.start("--fake-gpus", "1")

    [attempt] = herd.json("show", "1")["attempts"]
    kept = (attempt["host"], attempt["pid"], attempt["peak_mem"], attempt["exit_code"])
    assert kept == ("old-host", 4242, 3 * 2**30, 0)
    assert (attempt["peak_rss"], attempt["cpu_time"]) == (None, None)
    assert attempt_line(herd.cli("show", "1").stdout, 1) == NOT_MEASURED


def test_gpuherd_run_records_each_jobs_host_usage_in_its_job_json(runs: Runs) -> None:
    out = runs.root / "out"
    done = runs.run(
        "--fake-gpus", "1", "--gpus-per-job", "0", "--output-dir", str(out), "-", input=HOG + "\n"
    )
    assert done.returncode == 0, done.stderr
    info = job_info(out / "job_0")
    assert info["peak_rss"] >= 300 * MIB and info["cpu_time"] >= 0.45, info


def test_a_job_is_measured_under_a_run_started_by_a_big_process(runs: Runs) -> None:
    """A process's own ru_maxrss holds what its parent had when it started it (the exec
    counts the memory it leaves): a run (or daemon) started by a pytest worker or a notebook
    of 600 MiB judged every job below that too small to measure (the CI saw the 300 MiB job
    above as null). The floor is the run's own memory alone."""
    out = runs.root / "out"
    parent = (
        "import subprocess, sys; held = b'x' * (600 * 2**20); "  # (written: resident)
        "sys.exit(subprocess.run(sys.argv[1:], input=sys.stdin.read(), text=True).returncode)"
    )
    run = [GPUHERD_BIN, "run", "--fake-gpus", "1", "--gpus-per-job", "0", "--output-dir", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", parent, *run, "-"],
        input=ALLOCATE + "\n",
        cwd=runs.cwd,
        env=runs.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    info = job_info(out / "job_0")
    assert info["peak_rss"] is not None, info  # before: null, below the parent's 600 MiB
    assert 300 * MIB <= info["peak_rss"] < 600 * MIB, info


def test_a_restored_backup_keeps_what_the_attempts_folder_measured(
    daemon: Herd, tmp_path: Path
) -> None:
    """herd.db put back from a backup taken while attempt 1 ran, which has ended since, as the
    daemon that reaped it wrote in its attempt.json: the restart records it from there (as
    it records its end), and rewrites attempt.json with it, not with nulls."""
    go, copy = tmp_path / "go", tmp_path / "backup.db"
    job = daemon.running_until(go)
    daemon.cli("daemon", "backup", str(copy))
    go.touch()
    assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    [measured] = daemon.json("show", str(job))["attempts"]
    assert measured["cpu_time"] is not None
    daemon.cli("daemon", "stop")
    for part in daemon.home.glob("herd.db*"):
        part.unlink()
    (daemon.home / "herd.db").write_bytes(copy.read_bytes())
    daemon.start("--fake-gpus", "4")

    [attempt] = daemon.json("show", str(job))["attempts"]
    used = (measured["peak_rss"], measured["cpu_time"])
    assert (attempt["outcome"], attempt["peak_rss"], attempt["cpu_time"]) == ("exit", *used)
    recorded = json.loads((Path(attempt["dir"]) / "attempt.json").read_text())
    assert (recorded["peak_rss"], recorded["cpu_time"]) == used
