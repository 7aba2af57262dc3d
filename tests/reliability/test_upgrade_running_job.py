"""An upgrade in the middle of a queue (README, "After upgrading gpuherd"): the current daemon
takes over a herd.db of gpuherd 0.1.0 (schema 2) while a job that release started runs.

gpuherd 0.1.0 ran each job under a wrapper shell that wrote `pid` and `exit_status` files (not
`process`), and gave its processes no attempt key (GPUHERD_ATTEMPT_KEY): the folder's `pid`
file is all that tells its job apart. The old database is built here by the SQL of the
migrations that release had, and the old job by a shell that records what 0.1.0's did, so the
test needs neither git nor the old code.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from conftest import Herd, wait_for
from gpuherd.store_schema import MIGRATIONS

OLD_SCHEMA = 2
"""gpuherd 0.1.0's schema version."""

OLD_WRAPPER = (
    # What 0.1.0's job shell did: its pid into `pid`, the command by a second shell, then the
    # command's status into `exit_status` (it led its own session, its output in the logs).
    'printf "%s\\n" "$$" > "$2/pid"; /bin/sh -c "$1"; '
    'code=$?; printf "%s\\n" "$code" > "$2/exit_status"; exit "$code"'
)


def old_database(path: Path, home: Path, running_pid: int, now: float) -> None:
    """A herd.db as gpuherd 0.1.0 left it: job 1 succeeded, job 2 runs on GPU 0 (pid
    `running_pid`), job 3 is queued for a GPU, job 4 is held, job 5 waits for job 2 (--after)."""
    db = sqlite3.connect(path)
    for step in MIGRATIONS[:OLD_SCHEMA]:
        db.executescript(step)
    env = json.dumps({"PATH": os.environ["PATH"]}, sort_keys=True)
    db.execute(
        "INSERT INTO envs(id, hash, json) VALUES (1, ?, ?)",
        (hashlib.sha256(env.encode()).hexdigest(), env),
    )
    db.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)",
        [
            ("executor", '{"kind": "local", "address": null}'),
            ("probe", '{"gpus": null, "fake_gpus": "1"}'),
        ],
    )
    db.execute("INSERT INTO devices(idx, slots, state) VALUES (0, 1, 'enabled')")
    columns = (
        "id, command, cwd, env_id, env_overrides, gpus, after, retries, grace, project, state, "
        "priority, position, attempt, created_at, queued_at, started_at, ended_at, assigned, "
        "pid, outcome, exit_code"
    )
    then = now - 60
    db.executemany(
        f"INSERT INTO jobs({columns}) VALUES ({', '.join('?' * 22)})",
        [
            (1, "echo old-log", str(home), 1, "{}", 1, "[]", 0, 10.0, "alpha", "succeeded",
             0, 1.0, 1, then, then, then, then + 1, "[0]", 4321, "exit", 0),
            (2, "old job", str(home), 1, "{}", 1, "[]", 0, 10.0, "alpha", "running",
             0, 2.0, 1, then, then, now - 5, None, "[0]", running_pid, None, None),
            (3, "echo queued-ran", str(home), 1, "{}", 1, "[]", 0, 10.0, None, "queued",
             0, 3.0, 0, then, then, None, None, None, None, None, None),
            (4, "echo held", str(home), 1, "{}", 1, "[]", 0, 10.0, None, "held",
             0, 4.0, 0, then, then, None, None, None, None, None, None),
            (5, "echo after-ran", str(home), 1, "{}", 0, "[2]", 0, 10.0, None, "queued",
             0, 5.0, 0, then, then, None, None, None, None, None, None),
        ],
    )  # fmt: skip
    db.execute("INSERT INTO deps(job, dep) VALUES (5, 2)")
    uuid = json.dumps(["GPU-fake-00000000-0000-0000-0000-000000000000"])
    db.executemany(
        "INSERT INTO attempts(job_id, number, gpus, gpu_uuids, dir, host, started_at, pid, "
        "ended_at, outcome, exit_code) VALUES (?, 1, '[0]', ?, ?, 'host', ?, ?, ?, ?, ?)",
        [
            (1, uuid, str(home / "jobs/1/attempt-1"), then, 4321, then + 1, "exit", 0),
            (2, uuid, str(home / "jobs/2/attempt-1"), now - 5, running_pid, None, None, None),
        ],
    )
    db.executemany(
        "INSERT INTO events(job_id, at, event, from_state, to_state, detail) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (1, then, "submit", None, "queued", None),
            (1, then, "start", "queued", "running", None),
            (1, then + 1, "succeed", "running", "succeeded", "exit 0"),
            (2, then, "submit", None, "queued", None),
            (2, now - 5, "start", "queued", "running", None),
            (2, now - 5, "spawn", None, "", f"pid {running_pid}"),
            (3, then, "submit", None, "queued", None),
            (4, then, "submit", None, "held", None),
            (5, then, "submit", None, "queued", None),
        ],
    )
    db.execute(f"PRAGMA user_version = {OLD_SCHEMA}")
    db.commit()
    db.close()


def start_old_job(folder: Path, command: str) -> subprocess.Popen[bytes]:
    """A job as gpuherd 0.1.0 ran it, its daemon gone: its own session, its output in the
    attempt's logs, GPUHERD_JOB_ID and GPUHERD_ATTEMPT but no attempt key."""
    folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUHERD_")}
    env.update(GPUHERD_JOB_ID="2", GPUHERD_ATTEMPT="1", CUDA_VISIBLE_DEVICES="0")
    with open(folder / "stdout.log", "wb") as out, open(folder / "stderr.log", "wb") as err:
        job = subprocess.Popen(
            ["/bin/sh", "-c", OLD_WRAPPER, "gpuherd-job", command, str(folder)],
            stdout=out,
            stderr=err,
            env=env,
            start_new_session=True,
        )
    wait_for((folder / "pid").exists, what="the old job's pid file")
    return job


def test_the_current_daemon_takes_over_a_job_gpuherd_0_1_started(herd: Herd) -> None:
    herd.home.mkdir(mode=0o700)
    go = herd.home / "go"
    old = start_old_job(
        herd.home / "jobs/2/attempt-1",
        f"echo old-start; while [ ! -e {go} ]; do sleep 0.05; done; echo old-end; exit 7",
    )
    try:
        finished = herd.home / "jobs/1/attempt-1"
        finished.mkdir(parents=True)
        (finished / "stdout.log").write_text("old-log\n")
        (finished / "pid").write_text("4321\n")
        (finished / "exit_status").write_text("0\n")
        old_database(herd.home / "herd.db", herd.home, old.pid, time.time())

        herd.start("--fake-gpus", "1")  # the upgrade's restart
        # Before: "job 2 attempt 1 (pid N) is gone, with no exit status recorded (killed
        # with SIGKILL while no daemon watched it ...): the job is lost", as it ran on.
        job = herd.job(2)
        assert (job["state"], job["pid"], job["outcome"]) == ("running", old.pid, None)
        assert f"re-attached to job 2 (pid {old.pid})" in (herd.home / "daemon.log").read_text()
        assert herd.job(3)["state"] == "queued"  # GPU 0 is still the old job's
        assert herd.job(4)["state"] == "held"
        assert herd.job(5)["state"] == "queued"  # before: cancelled, as job 2 was taken for lost
        assert herd.cli("log", "1").stdout == "old-log\n"

        go.touch()
        ended = herd.wait_state(2, "failed")
        assert (ended["outcome"], ended["exit_code"]) == ("exit", 7)
        assert herd.cli("log", "2").stdout == "old-start\nold-end\n"
        herd.wait_state(3, "succeeded")  # the queued job starts on the GPU it freed
        assert herd.cli("log", "3").stdout == "queued-ran\n"
        waiter = herd.wait_state(5, "cancelled")  # --after: job 2 had to succeed
        assert waiter["message"] == "job 2 ended (failed)"
        events = [e["event"] for e in herd.job(2)["events"]]
        assert events == ["submit", "start", "spawn", "fail"]
    finally:
        if old.poll() is None:
            os.killpg(old.pid, signal.SIGKILL)
        old.wait(timeout=10)
