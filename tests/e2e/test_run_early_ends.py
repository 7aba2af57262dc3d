"""`gpuherd run` that cannot go on: a yielder whose process ends before its yielder() returned,
and a --keep-state that could not keep the database. One clear line and a non-zero exit; no
job started for a mistake seen at the start; no temporary state folder left behind.

Runs go through the installed console script, with a private TMPDIR (`runs.tmp`) where the
run's temporary state folder (gpuherd-run-*) would be.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_run_cli import assert_one_error_line, job_folders, write_yielder

from conftest import Probe, Runs, gone, wait_for


def state_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("gpuherd-run-*"))


# ---- a yielder whose process ends before yielder() returned -------------------------------------


@pytest.mark.parametrize(
    ("body", "how"),
    [
        pytest.param(
            "import os\ndef yielder():\n    yield JOB\n    os._exit(0)\n",
            "exit status 0",
            id="os-exit-0-while-yielding",
        ),
        pytest.param("import os\nos._exit(0)\n", "exit status 0", id="os-exit-0-on-import"),
        pytest.param(
            "import os, signal\ndef yielder():\n    yield JOB\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n",
            "killed by SIGKILL",
            id="killed",
        ),
    ],
)
def test_yielder_whose_process_ends_early_fails_the_run_with_one_line(
    runs: Runs, probe: Probe, body: str, how: str
) -> None:
    path = write_yielder(runs, body.replace("JOB", repr(probe.cmd("never"))))
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--yielder", str(path))
    line = assert_one_error_line(proc, f"--yielder {path}", how, "before yielder() returned")
    assert proc.returncode == 1, line  # as for a yielder that raises or calls sys.exit()
    assert proc.stdout == ""
    assert job_folders(out) == []
    assert not probe.started("never")
    assert state_folders(runs.tmp) == []


@pytest.fixture
def sleeper_pid(runs: Runs) -> Iterator[Path]:
    """Where a yielder writes the pid of a process it leaves running; killed at the end."""
    pid_file = runs.root / "sleeper.pid"
    yield pid_file
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_process_the_yielder_leaves_running_does_not_hold_the_run(
    runs: Runs, probe: Probe, sleeper_pid: Path
) -> None:
    # The pipe the yielder's items come through must not be inherited (here by a process
    # that takes every descriptor it may): the run would wait for the pipe's end, that is
    # for the sleeper, for a minute.
    path = write_yielder(
        runs,
        f"""
import os, subprocess
def yielder():
    sleeper = subprocess.Popen(
        ["sleep", "60"], close_fds=False, start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    open({str(sleeper_pid)!r}, "w").write(str(sleeper.pid))
    yield {probe.cmd("job")!r}
    os._exit(0)
""",
    )
    proc = runs.run(
        "--fake-gpus", "1", "--output-dir", str(runs.root / "out"), "--yielder", str(path),
        timeout=30,
    )  # fmt: skip
    assert_one_error_line(proc, "exit status 0", "before yielder() returned")
    assert not gone(int(sleeper_pid.read_text()))  # it ran all along
    assert not probe.started("job")


def test_what_a_yielder_prints_is_shown_and_its_jobs_run(runs: Runs, probe: Probe) -> None:
    path = write_yielder(
        runs,
        f"import sys\nprint('making jobs')\nprint('to stderr', file=sys.stderr)\n"
        f"def yielder():\n    yield {probe.cmd('job')!r}\n",
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == "making jobs"
    assert proc.stderr == "to stderr\n"
    assert sorted(probe.by_name()) == ["job"]


def test_interrupt_while_the_yielder_runs_stops_it_too(runs: Runs, probe: Probe) -> None:
    pid_file = runs.root / "yielder.pid"
    path = write_yielder(
        runs,
        f"""
import os, time
def yielder():
    open({str(pid_file)!r}, "w").write(str(os.getpid()))
    time.sleep(60)
    yield {probe.cmd("never")!r}
""",
    )
    run = runs.start(
        "--fake-gpus", "1", "--output-dir", str(runs.root / "out"), "--yielder", str(path)
    )
    pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the yielder"))
    run.proc.send_signal(signal.SIGINT)  # to gpuherd alone: it must stop the yielder itself
    status, out, err = run.finish()
    assert status == 130, out + err
    assert err.split() == ["gpuherd:", "interrupted"], err  # (after the newline click prints)
    wait_for(lambda: gone(pid), timeout=5, what="the yielder's process to end")
    assert not probe.started("never")
    assert state_folders(runs.tmp) == []


# ---- --keep-state ------------------------------------------------------------------------------


def test_keep_state_into_a_folder_is_refused_before_any_job_starts(
    runs: Runs, probe: Probe
) -> None:
    out = runs.root / "out"
    name = "herd.db"
    (out / name).mkdir(parents=True)
    assert state_folders(runs.tmp) == []
    proc = runs.run(
        "--fake-gpus",
        "2",
        "--output-dir",
        str(out),
        "--keep-state",
        input=probe.cmd("never") + "\n",
    )
    assert_one_error_line(proc, "--keep-state", f"{out / name} is a folder", "--output-dir")
    assert proc.stdout == ""
    assert not probe.started("never")
    assert job_folders(out) == [name]
    assert state_folders(runs.tmp) == []  # the temporary state folder was not made, or went


def test_keep_state_the_run_could_not_keep_says_where_the_database_is(
    runs: Runs, probe: Probe
) -> None:
    # The folder is made by the job itself, after the check at the start: the run still ends
    # with its summary, says where the database stayed, and fails.
    out = runs.root / "out"
    job = f"mkdir {out / 'herd.db'} && " + probe.cmd("job")
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--keep-state", input=job + "\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == ""
    [left] = state_folders(runs.tmp)
    lines = proc.stdout.splitlines()
    assert lines[-2] == (
        f"--keep-state: cannot move the run's database to {out}: Is a directory; "
        f"it is in {left / 'herd.db'}"
    )
    assert lines[-1] == f"1 succeeded, 0 failed; logs in {out}"
    with sqlite3.connect(left / "herd.db") as connection:
        assert connection.execute("select count(*) from jobs").fetchone() == (1,)
    connection.close()


def test_keep_state_from_a_temporary_folder_on_another_file_system(
    runs: Runs, probe: Probe
) -> None:
    # /tmp is often a tmpfs, and the output on a disk: the database cannot be renamed there.
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == runs.root.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the test's folder")
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        runs.env["TMPDIR"] = tmp
        out = runs.root / "out"
        proc = runs.run(
            "--fake-gpus",
            "1",
            "--output-dir",
            str(out),
            "--keep-state",
            input=probe.cmd("a") + "\n",
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert state_folders(Path(tmp)) == []
    # A copy, not a rename: it must stay private all the same (the jobs' environments).
    assert stat.S_IMODE((out / "herd.db").stat().st_mode) == 0o600
    with sqlite3.connect(out / "herd.db") as connection:
        assert connection.execute("select count(*) from jobs").fetchone() == (1,)
    connection.close()
