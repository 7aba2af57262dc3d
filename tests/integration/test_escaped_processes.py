"""Processes a job started that left its process group (setsid, daemonizing double forks):
stopped, paused and given their grace with the job, and killed when it ends, while processes
of other attempts, other homes and on-end hooks are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import Herd, Runs, gone, wait_for
from gpuherd.layout import Layout


def escaping(pid_file: Path, body: str = "exec sleep 100") -> str:
    """A command that starts a process in a session of its own (out of the job's group),
    which writes its pid to `pid_file`, and then waits."""
    return f"setsid sh -c 'echo $$ > {pid_file}; {body}' & sleep 100"


def escaped_pid(pid_file: Path, job_pgid: int | None = None) -> int:
    wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="escaped pid")
    pid = int(pid_file.read_text())
    assert os.getsid(pid) == pid, "the process did not leave the job's session"
    if job_pgid is not None:
        assert os.getpgid(pid) != job_pgid
    return pid


def claiming(key: str, **env: str) -> subprocess.Popen[bytes]:
    """A process in a session of its own that carries this attempt key."""
    full = dict(os.environ, GPUHERD_ATTEMPT_KEY=key, **env)
    return subprocess.Popen(["sleep", "100"], env=full, start_new_session=True)


@pytest.fixture
def outsider(daemon: Herd) -> Iterator[subprocess.Popen[bytes]]:
    """A process that claims to be job 1's first attempt by id and folder, but of another
    home (or another `gpuherd run` into the same folder)."""
    process = claiming(
        "0123456789ab:1:1",
        GPUHERD_JOB_ID="1",
        GPUHERD_ATTEMPT="1",
        GPUHERD_ATTEMPT_DIR=str(daemon.home / "jobs" / "1" / "attempt-1"),
    )
    yield process
    process.kill()
    process.wait()


def test_kill_stops_what_left_the_group(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    job_id = daemon.submit(escaping(tmp_path / "pid"))
    job = daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid", job["pid"])
    daemon.cli("kill", str(job_id))
    assert daemon.wait_state(job_id, "killed", "failed", "succeeded")["state"] == "killed"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_what_left_the_group_gets_the_grace_period(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    saved = tmp_path / "saved"
    # It takes SIGTERM as a job's processes do, and saves before it exits.
    body = f'trap "sleep 0.3; echo saved > {saved}; exit 0" TERM; while :; do sleep 0.05; done'
    job_id = daemon.submit("--grace", "10", escaping(tmp_path / "pid", body))
    pid = escaped_pid(tmp_path / "pid")
    daemon.wait_state(job_id, "running")
    daemon.cli("kill", str(job_id))
    daemon.wait_state(job_id, "killed")
    assert saved.read_text() == "saved\n", "the job ended before what it started had saved"
    wait_for(lambda: gone(pid), 10, "the escaped process to end")


def test_the_end_of_a_job_kills_what_it_left_running(
    daemon: Herd, tmp_path: Path, outsider: subprocess.Popen[bytes]
) -> None:
    # Job 1 in the folder the outsider claims too: only the attempt key tells them apart.
    pid_file = tmp_path / "pid"
    job_id = daemon.submit(
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 100' & "
        f"while [ ! -s {pid_file} ]; do sleep 0.05; done"
    )
    assert job_id == 1
    pid = escaped_pid(tmp_path / "pid")
    assert daemon.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")
    assert outsider.poll() is None, "a process of another home's job 1 was killed"


def test_pause_stops_what_left_the_group_too(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    job_id = daemon.submit(escaping(tmp_path / "pid"))
    daemon.wait_state(job_id, "running")
    escaped = psutil.Process(escaped_pid(tmp_path / "pid"))
    daemon.cli("pause", str(job_id))
    wait_for(lambda: escaped.status() == psutil.STATUS_STOPPED, what="escaped process stopped")
    daemon.cli("resume", str(job_id))
    wait_for(lambda: escaped.status() != psutil.STATUS_STOPPED, what="escaped process resumed")
    daemon.cli("kill", str(job_id))
    wait_for(lambda: gone(escaped.pid), 10, "the escaped process to be killed")


def test_what_a_job_left_while_no_daemon_ran_is_killed_at_restart(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = daemon.submit(
        f"setsid sh -c 'echo $$ > {tmp_path / 'pid'}; exec sleep 100' & "
        f"while [ ! -e {go} ]; do sleep 0.05; done"
    )
    daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid")
    daemon.kill9()
    go.touch()
    wait_for(
        lambda: (
            daemon.home.joinpath("jobs", str(job_id), "attempt-1", "process")
            .read_text()
            .count("exit")
        ),
        what="the job to end while no daemon runs",
    )
    assert not gone(pid)
    daemon.start()
    assert daemon.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_an_on_end_hook_is_not_taken_for_what_the_job_left(daemon: Herd, tmp_path: Path) -> None:
    done = tmp_path / "hook-done"
    # The hook outlives the sweep after the job's end, and is told the job's attempt folder.
    daemon.cli("config", "set", "on-end", f"sleep 0.5; echo $GPUHERD_ATTEMPT_DIR > {done}")
    job_id = daemon.submit("true")
    daemon.wait_state(job_id, "succeeded")
    # (Its content, not the file: `>` makes the file empty before echo writes to it.)
    written = wait_for(lambda: done.exists() and done.read_text().strip(), 10, "the hook's line")
    assert written.endswith("attempt-1")


def test_a_job_submitted_from_a_hook_is_not_taken_for_a_hook(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    env = dict(daemon.env, GPUHERD_JOB_STATE="succeeded")  # as in a hook's environment
    job_id = int(daemon.cli("submit", "-q", escaping(tmp_path / "pid"), env=env).stdout)
    daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid")
    daemon.cli("kill", str(job_id))
    daemon.wait_state(job_id, "killed")
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_a_sweep_skips_points_whose_folder_another_sweeps_job_uses(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """Two sweeps into one results folder share their points' folders: two jobs running in
    one would write one set of logs, markers and job.json."""
    daemon = shared_daemon
    results = str(tmp_path / "shared")
    first = daemon.cli(
        "sweep", "sleep 100; echo {x}", "-p", "x", "1", "--name", "one", "--results-dir", results
    )
    assert first.stderr == ""
    (point,) = daemon.json("sweep", "status", "one")["rows"]
    daemon.wait_state(point["job_id"], "running")
    second = daemon.json(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "two", "--results-dir", results
    )
    assert (second["new"], second["skipped_active"], len(second["ids"])) == (1, 1, 1)
    assert second["warnings"] == [
        # (moving in, said with the points skipped too: said once, it was never said)
        f"sweep 'one' keeps its results in {results} too: a point of the same values is one"
        " folder for both, done once (--force runs it again, the other's results moved to its"
        " previous-runs/); give another --results-dir to keep them apart",
        "1 point skipped: its folder is in use by queued or running jobs of sweep 'one'"
        " (the same results folder); submit again once those ended, or give another"
        " --results-dir",
    ]
    assert daemon.job(second["ids"][0])["job_dir"] == str(tmp_path / "shared" / "x=2")
    assert not (tmp_path / "shared" / "x=1" / "previous-runs").exists()  # left as it was


def test_two_runs_at_once_never_stop_each_others_jobs(runs: Runs, tmp_path: Path) -> None:
    """Each run's jobs carry that run's own key: a second run (its job_0 beside the first's,
    or refused in the first's folder, which a run holds) leaves the first's processes be."""
    out = str(tmp_path / "shared")
    pid_file, go = tmp_path / "first", tmp_path / "go"
    (tmp_path / "first.txt").write_text(
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 100' & "
        f"while [ ! -e {go} ]; do sleep 0.05; done\n"
    )
    (tmp_path / "second.txt").write_text("true\n")
    first = runs.start("--fake-gpus", "1", "--output-dir", out, str(tmp_path / "first.txt"))
    escaped = escaped_pid(pid_file)
    refused = runs.run("--fake-gpus", "1", "--output-dir", out, str(tmp_path / "second.txt"))
    assert refused.returncode == 1 and "is in use by another gpuherd run" in refused.stderr
    beside = str(tmp_path / "beside")
    second = runs.run("--fake-gpus", "1", "--output-dir", beside, str(tmp_path / "second.txt"))
    assert second.returncode == 0, second.stderr
    assert not gone(escaped) and first.proc.poll() is None
    go.touch()
    status, _, err = first.finish()
    assert status == 0, err
    wait_for(lambda: gone(escaped), 10, "the first run's escaped process to be killed")


def test_what_ended_attempts_left_is_killed_when_a_daemon_starts(daemon: Herd) -> None:
    """A daemon killed within moments of a job's end never ran the pass that kills what the
    job left: the next daemon's first pass does, sparing what running jobs own."""
    ended = daemon.submit("true")
    daemon.wait_state(ended, "succeeded")
    running = daemon.submit("sleep 100")
    daemon.wait_state(running, "running")
    home_id = Layout.for_home(daemon.home).home_id
    left = claiming(f"{home_id}:{ended}:1")
    owned = claiming(f"{home_id}:{running}:1")
    other_home = claiming(f"ba9876543210:{ended}:1")
    try:
        daemon.kill9()
        daemon.start()
        wait_for(lambda: left.poll() is not None, 10, "the ended job's leftover to be killed")
        assert left.returncode == -signal.SIGKILL
        daemon.cli("kill", str(running))
        wait_for(lambda: owned.poll() is not None, 10, "the killed job's process to end")
        assert other_home.poll() is None
    finally:
        for process in (left, owned, other_home):
            process.kill()
            process.wait()


FORKER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.setsid()
open(sys.argv[1], "w").write(str(os.getpid()))
while True:  # a new session every 2 ms, each of which lives on
    if os.fork() == 0:
        os.setsid()
        time.sleep(100)
        os._exit(0)
    time.sleep(0.002)
"""


def test_what_forks_while_the_pass_runs_is_killed_too(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    tag = f"forker-{tmp_path.name}"
    job = daemon.submit(
        f"GPUHERD_TEST_TAG={tag} python3 {script} {tmp_path / 'pid'} & "
        f"while [ ! -s {tmp_path / 'pid'} ]; do sleep 0.01; done; sleep 0.3"
    )
    daemon.wait_state(job, "succeeded")
    wait_for(lambda: not tagged(tag), 15, "every process the forker made to be killed")


def tagged(tag: str) -> list[int]:
    found = []
    for proc in psutil.process_iter():
        try:
            if (
                proc.status() != psutil.STATUS_ZOMBIE
                and proc.environ().get("GPUHERD_TEST_TAG") == tag
            ):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found
