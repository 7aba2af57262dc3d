"""A daemon that cannot start because of its database says what to do, and the way out it
gives never loses the queue; a client waiting through a restart goes on with the new daemon."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import psutil
import pytest
from faults import fill, grow, read_only_bind, tmpfs
from test_cli_fuzz import half_answering_daemon

from conftest import Herd, gone, group_members, wait_for, wait_for_long_poll


def test_a_database_locked_by_another_program_is_said_so(herd: Herd) -> None:
    herd.env["GPUHERD_TEST_BUSY_TIMEOUT"] = "1"  # the daemon's wait for the lock: 1 s, not 5 s
    herd.start("--fake-gpus", "1")
    job = herd.submit("--hold", "--", "true")
    herd.cli("daemon", "stop")
    holder = sqlite3.connect(herd.home / "herd.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # a `sqlite3 herd.db` shell in a write, say
        refused = herd.cli("daemon", "start", check=False)
    finally:
        holder.close()
    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:"), refused.stderr
    assert str(herd.home / "herd.db") in lines[0]
    assert "another program holds a lock on it" in lines[0], lines[0]
    assert "aside" not in lines[0]  # which would start an empty queue for nothing
    herd.start()  # once the other program let go
    assert herd.job(job)["state"] == "held"


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:"), proc.stderr
    return lines[0]


def test_a_full_disk_at_start_is_said_so_and_the_queue_stays(herd: Herd) -> None:
    """SQLite says "disk I/O error" when its shared-memory file cannot grow on a full disk;
    the daemon advised moving herd.db aside (an empty queue) for it."""
    with tmpfs(herd.home, "2m"):
        try:
            herd.start("--fake-gpus", "1")
            job = herd.submit("--hold", "--", "true")
            herd.cli("daemon", "stop")
            fill(herd.home)
            line = one_error_line(herd.cli("daemon", "start", check=False))
            assert str(herd.home / "herd.db") in line
            assert "its disk is full: free some space" in line, line
            assert "aside" not in line
            grow(herd.home, "16m")
            herd.start()
            assert herd.job(job)["state"] == "held"
        finally:
            herd.cleanup()


def test_a_read_only_home_at_start_is_said_so(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("daemon", "stop")
    with read_only_bind(herd.home):
        line = one_error_line(herd.cli("daemon", "start", check=False))
    assert str(herd.home) in line and "Read-only file system" in line, line
    assert "remount its disk read-write" in line, line  # before: only what failed, on which file
    herd.start()


def test_a_wait_suspended_over_a_crash_and_a_restart_goes_on(daemon: Herd, tmp_path: Path) -> None:
    """A wait that looks again only once the next daemon answers (it was suspended, or slow)
    took that daemon for the one that went away, and gave up on it after a minute."""
    go = tmp_path / "go"
    job = daemon.submit("--", f"while [ ! -e {go} ]; do sleep 0.05; done")
    daemon.wait_state(job, "running")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "wait", str(job)],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        process = psutil.Process(waiting.pid)
        wait_for_long_poll(process)
        os.kill(waiting.pid, signal.SIGSTOP)  # Ctrl-Z, a laptop's lid, a loaded machine
        daemon.kill9()
        daemon.start()
        os.kill(waiting.pid, signal.SIGCONT)
        go.touch()
        out, err = waiting.communicate(timeout=40)  # before: it gave up after 60 s
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert out == "1 of 1 job succeeded\n"


def _connected(pid: int) -> bool:
    """Whether process `pid` has a connected Unix socket (/proc/net/unix's state 03, which a
    connect() to a listening socket reaches once queued, answered or not)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    with open("/proc/net/unix") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    return any(len(row) > 6 and row[6] in inodes and row[5] == "03" for row in rows)


def test_a_wait_whose_first_reads_meet_a_crash_goes_on_with_the_next_daemon(
    daemon: Herd, tmp_path: Path
) -> None:
    """The daemon dies while `wait` reads which jobs to wait for (frozen here, then killed,
    as a crash of a loaded machine): that read is asked again of the next daemon, as the
    wait's own are. It failed at once: "lost the connection to the daemon" (exit 3)."""
    go = tmp_path / "go"
    job = daemon.submit("--", f"while [ ! -e {go} ]; do sleep 0.05; done")
    daemon.wait_state(job, "running")
    frozen = psutil.Process(daemon.pid)
    frozen.suspend()  # its reads wait, unanswered
    waiting = daemon.popen("wait", str(job))
    try:
        # (connected, not a socket alone: one killed before its connect() found no daemon,
        # exit 3, once at a load of 8)
        wait_for(lambda: _connected(waiting.pid), what="the wait's first read")
        frozen.kill()
        wait_for(lambda: gone(frozen.pid), what="the daemon to die")
        daemon.start()
        go.touch()
        out, err = waiting.communicate(timeout=40)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert out == b"1 of 1 job succeeded\n"


def test_a_database_moved_aside_never_kills_the_jobs_that_run(herd: Herd, tmp_path: Path) -> None:
    """The way out the daemon gives for a damaged database is to move it aside. The next
    daemon took the processes of every job that was running for leftovers of ended attempts,
    and SIGKILLed them at its start, in silence."""
    go, done = tmp_path / "go", tmp_path / "done"
    herd.start("--fake-gpus", "1")
    job = herd.submit("--", f"while [ ! -e {go} ]; do sleep 0.05; done; touch {done}")
    pgid = wait_for(lambda: herd.job(job)["pid"], what="the job's pid")
    herd.cli("daemon", "stop")  # the job goes on
    aside = tmp_path / "aside"
    aside.mkdir()
    for part in herd.home.glob("herd.db*"):
        part.rename(aside / part.name)

    herd.start("--fake-gpus", "1")
    # Numbered after the job folders: job 2; CPU-only, as GPU 0 stays the job's while it runs
    # (test_restored_unknown_job.py).
    witness = herd.submit("--gpus", "0", "--", "true")
    assert witness == job + 1
    herd.wait_state(witness, "succeeded")  # its end asks for a pass over /proc too
    log = herd.home / "daemon.log"
    wait_for(lambda: "the database knows no such attempt" in log.read_text(), what="the log line")
    assert group_members(pgid), "the job was killed"
    go.touch()
    wait_for(done.exists, what="the job to finish its work")


def test_a_database_put_back_after_a_failed_start_keeps_its_queue(
    herd: Herd, tmp_path: Path
) -> None:
    """herd.db moved aside, a start that fails (its port taken), herd.db put back: that start
    left its new, empty queue's write-ahead log beside herd.db, and SQLite applied it to the
    file put back: `ls --all` listed no job, and the next start wrote the empty queue over it."""
    herd.start("--fake-gpus", "1")
    job = herd.submit("--", "true")
    herd.wait_state(job, "succeeded")
    herd.cli("daemon", "stop")
    aside = tmp_path / "herd.db"
    (herd.home / "herd.db").rename(aside)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        listen = ("--listen", f"127.0.0.1:{port}")
        failed = herd.cli("daemon", "start", "--fake-gpus", "1", *listen, check=False)
    assert f"cannot listen on 127.0.0.1:{port}" in one_error_line(failed)
    aside.rename(herd.home / "herd.db")  # put back

    herd.start()  # as the last start that worked: --fake-gpus 1
    assert [(j["id"], j["state"]) for j in herd.ls_all()] == [(job, "succeeded")]


@pytest.mark.parametrize("argv", [["submit", "--", "true"], ["rm", "1"]])
def test_a_change_cut_off_by_a_crash_says_it_may_have_been_done(
    tmp_path: Path, argv: list[str]
) -> None:
    """A daemon killed between committing a change and answering: the client cannot know
    whether it was done, and a blind second `submit` queues the jobs twice."""
    path = tmp_path / "run" / "herd.sock"
    path.parent.mkdir(mode=0o700)
    stop = threading.Event()
    server = threading.Thread(target=half_answering_daemon, args=(path, stop))
    server.start()
    try:
        wait_for(path.exists, what="the fake daemon's socket")
        env = {**os.environ, "GPUHERD_HOME": str(tmp_path / "home"), "GPUHERD_SOCKET": str(path)}
        run = partial(subprocess.run, env=env, capture_output=True, text=True, timeout=60)
        change = run([sys.executable, "-m", "gpuherd", *argv])
        look = run([sys.executable, "-m", "gpuherd", "ls"])
    finally:
        stop.set()
        server.join(timeout=10)
    line = one_error_line(change)
    assert "lost the connection to the daemon" in line
    assert "it may have been done before the daemon went: `gpuherd ls --all`" in line, line
    assert "may have been done" not in look.stderr  # a question changes nothing
