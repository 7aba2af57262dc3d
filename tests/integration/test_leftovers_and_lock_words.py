"""Small leftovers and misleading lines: a `submit` whose output failed said only "error" though
its job was queued (a script retried and queued it twice); a daemon.lock held by another
program was said to be held by the last daemon, dead, which `daemon stop` then said did not
run; and each stopped daemon left its empty socket folder under XDG_RUNTIME_DIR."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import Herd, wait_for


def run_with_full_output(herd: Herd, *args: str) -> subprocess.CompletedProcess[str]:
    with open("/dev/full", "w") as full:  # every write: ENOSPC
        return subprocess.run(
            [sys.executable, "-m", "gpuherd", *args],
            env=herd.env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )


def newest_ids(herd: Herd, count: int) -> list[int]:
    return sorted(job["id"] for job in herd.ls_all())[-count:]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_submit_whose_output_fails_says_its_jobs_were_queued(
    daemon: Herd, tmp_path: Path
) -> None:
    done = run_with_full_output(daemon, "submit", "-q", "--hold", "--", "true")
    (job,) = newest_ids(daemon, 1)
    assert (done.returncode, done.stderr) == (
        1,
        "gpuherd: error: No space left on device (writing the output): "
        f"job {job} was queued all the same\n",
    )
    sweep = ("sweep", "echo {x}", "-p", "x", "1", "2", "--hold", "-q")
    done = run_with_full_output(daemon, *sweep, "--results-dir", str(tmp_path / "sw"))
    first, last = newest_ids(daemon, 2)
    assert (done.returncode, done.stderr) == (
        1,
        "gpuherd: error: No space left on device (writing the output): "
        f"jobs {first}-{last} were queued all the same\n",
    )
    # A command that queues nothing says what failed alone.
    done = run_with_full_output(daemon, "ls", "--all")
    assert done.stderr == "gpuherd: error: No space left on device (writing the output)\n"


HOLD_LOCK = """
import fcntl, sys, time
held = open(sys.argv[1], "a")
fcntl.flock(held, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


def test_a_lock_file_another_program_holds_is_said_so_with_its_pid(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("daemon", "stop")  # its pid stays noted in daemon.lock: a dead one
    lock = herd.home / "daemon.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        start = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert (start.returncode, start.stdout) == (1, ""), start
    said = start.stderr
    assert said.startswith(
        f"gpuherd: error: another program holds the daemon's lock file {lock} (pid "
        f"{holder.pid}: {sys.executable[:20]}"
    ), said
    assert said.endswith(
        f"): no gpuherd daemon runs for {herd.home}, and none can start while it holds it: end "
        f"it (`kill {holder.pid}`) or wait until it lets go, then `gpuherd daemon start` again\n"
    ), said
    assert len(said.splitlines()) == 1, said
    herd.start("--fake-gpus", "1")  # once it let go


def test_a_stopped_daemon_removes_its_empty_runtime_folder(herd: Herd) -> None:
    # (not under tmp_path: the socket's path would pass the 107 bytes a Unix socket takes)
    with tempfile.TemporaryDirectory(prefix="xdg-") as made:
        runtime = Path(made)
        herd.env["XDG_RUNTIME_DIR"] = made
        herd.start("--fake-gpus", "1")
        (folder,) = (runtime / "gpuherd").iterdir()
        assert (folder / "herd.sock").exists()
        herd.cli("daemon", "stop")
        wait_for(lambda: not folder.exists(), what="the socket's folder removed")
        assert (runtime / "gpuherd").is_dir()  # (the other homes' folders go in it)
        # One holding a file of another's is left.
        herd.start("--fake-gpus", "1")
        (folder / "notes.txt").write_text("mine\n")
        herd.cli("daemon", "stop")
        assert sorted(os.listdir(folder)) == ["notes.txt"]
