"""Job processes through a real daemon: process groups, signals, retries, environment, logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from conftest import Herd, Recorder, group_members, read_line, wait_for
from gpuherd.executors.local_escaped import stopped

TREE = "sh -c 'sleep 100 & sleep 100; wait'"


def wait_group_gone(pgid: int, timeout: float = 10.0) -> None:
    wait_for(lambda: not group_members(pgid), timeout, f"no process left in group {pgid}")


def running_pid(herd: Herd, job_id: int, members: int = 1) -> int:
    """The job's pid (= its process group) once the group has at least `members` processes."""
    job = herd.wait_state(job_id, "running")
    pid = int(job["pid"] or wait_for(lambda: herd.job(job_id)["pid"], what="the job's pid"))
    wait_for(lambda: len(group_members(pid)) >= members, what=f"{members} processes in group")
    return pid


def test_kill_ends_the_whole_process_group(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit(TREE)
    pgid = running_pid(shared_daemon, job_id, members=3)
    assert int(shared_daemon.json("show", str(job_id))["pid"]) == pgid
    shared_daemon.cli("kill", str(job_id))
    job = shared_daemon.wait_state(job_id, "killed", "failed", "succeeded")
    assert (job["state"], job["outcome"]) == ("killed", "killed")
    wait_group_gone(pgid)


def test_kill_with_grace_escalates_to_sigkill(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--grace", "0.5", "sh -c 'trap \"\" TERM; sleep 100 & wait'")
    pgid = running_pid(shared_daemon, job_id, members=3)
    started = time.monotonic()
    shared_daemon.cli("kill", str(job_id))
    job = shared_daemon.wait_state(job_id, "killed", "failed", "succeeded", timeout=10)
    assert time.monotonic() - started < 5
    assert (job["state"], job["outcome"]) == ("killed", "killed")
    wait_group_gone(pgid)


GRACEFUL = """
import signal, sys, time
def on_term(*_):
    time.sleep(0.3)  # saving a checkpoint
    open(sys.argv[1], "w").write("saved")
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
time.sleep(100)
"""


def test_kill_gives_a_job_its_grace_period(shared_daemon: Herd, tmp_path: Path) -> None:
    script, saved = tmp_path / "graceful.py", tmp_path / "saved"
    script.write_text(GRACEFUL)
    job_id = shared_daemon.submit("--grace", "10", "--", sys.executable, str(script), str(saved))
    shared_daemon.wait_state(job_id, "running")
    stdout = shared_daemon.home / "jobs" / str(job_id) / "attempt-1" / "stdout.log"
    wait_for(lambda: stdout.exists() and stdout.read_text() == "ready\n", what="handler set")
    shared_daemon.cli("kill", str(job_id))
    job = shared_daemon.wait_state(job_id, "killed", "failed", "succeeded")
    assert saved.exists(), "the job was SIGKILLed before its grace period was over"
    assert (job["state"], job["outcome"]) == ("killed", "killed")


def test_sigkill_from_outside_fails_the_job_and_frees_its_gpu(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    job_id = herd.submit(TREE)
    pgid = running_pid(herd, job_id, members=3)
    os.kill(pgid, signal.SIGKILL)
    job = herd.wait_state(job_id, "failed", "killed", "lost", "succeeded")
    assert (job["state"], job["outcome"], job["signal"]) == ("failed", "signal", 9)
    wait_group_gone(pgid)
    after = herd.submit("--", "true")
    assert herd.wait_state(after, "succeeded")["gpus"] == [0]


def test_retries_until_success_keep_every_attempt(shared_daemon: Herd, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    script = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
        'echo "out $n $GPUHERD_ATTEMPT"; echo "err $n" >&2; [ $n -ge 3 ]'
    )
    job_id = shared_daemon.submit("--retries", "2", script)
    job = shared_daemon.wait_state(job_id, "succeeded", "failed")
    assert (job["state"], job["attempt"]) == ("succeeded", 3)
    attempts = shared_daemon.json("show", str(job_id))["attempts"]
    assert [(a["number"], a["outcome"], a["exit_code"]) for a in attempts] == [
        (1, "exit", 1),
        (2, "exit", 1),
        (3, "exit", 0),
    ]
    for n, attempt in enumerate(attempts, 1):
        folder = Path(attempt["dir"])
        assert folder.name == f"attempt-{n}"
        assert (folder / "stdout.log").read_text() == f"out {n} {n}\n"
        assert (folder / "stderr.log").read_text() == f"err {n}\n"
        markers = {m for m in ("SUCCESS", "FAILURE") if (folder / m).exists()}
        assert markers == ({"SUCCESS"} if n == 3 else {"FAILURE"})


def test_timeout_stops_the_job(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--timeout", "1s", "--", "sleep", "100")
    pgid = running_pid(shared_daemon, job_id)
    job = shared_daemon.wait_state(job_id, "failed", "killed", "succeeded", timeout=10)
    assert (job["state"], job["outcome"]) == ("failed", "timeout")
    assert 0.9 <= job["ended_at"] - job["started_at"] < 5
    wait_group_gone(pgid)


def test_a_retry_gets_its_whole_timeout_from_its_own_start(shared_daemon: Herd) -> None:
    # Attempt 1 fails after 1.5 s of its 3 s; attempt 2 needs 2 s. Counted from the job's
    # first start, attempt 2 would be cut off after 1.5 s.
    job_id = shared_daemon.submit(
        "--timeout", "3s", "--retries", "1", "--",
        "sh", "-c", 'if [ "$GPUHERD_ATTEMPT" = 1 ]; then sleep 1.5; exit 1; fi; sleep 2',
    )  # fmt: skip
    job = shared_daemon.wait_state(job_id, "failed", "succeeded", timeout=20)
    attempts = shared_daemon.json("show", str(job_id))["attempts"]
    assert [(a["number"], a["outcome"]) for a in attempts] == [(1, "exit"), (2, "exit")]
    assert job["state"] == "succeeded", job


def group_statuses(pgid: int) -> set[str]:
    statuses = set()
    for pid in group_members(pgid):
        try:
            statuses.add(psutil.Process(pid).status())
        except psutil.NoSuchProcess:
            continue
    return statuses


def test_pause_and_resume_a_running_job(shared_daemon: Herd, recorder: Recorder) -> None:
    job_id = shared_daemon.submit(recorder.cmd("runs", wait="go"))
    pgid = running_pid(shared_daemon, job_id, members=2)
    shared_daemon.cli("pause", str(job_id))
    assert shared_daemon.job(job_id)["state"] == "paused"
    # Each stopped as gpuherd tells it (T, or D waiting in vfork for a child in T).
    wait_for(lambda: all(stopped(pid) for pid in group_members(pgid)), what="group stopped")

    shared_daemon.cli("resume", str(job_id))
    assert shared_daemon.job(job_id)["state"] == "running"
    wait_for(lambda: psutil.STATUS_STOPPED not in group_statuses(pgid), what="group resumed")
    recorder.go()
    shared_daemon.wait_state(job_id, "succeeded")
    assert len(recorder.lines("runs")) == 1


def test_retry_of_a_failed_job_runs_a_new_attempt(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit('[ "$GPUHERD_ATTEMPT" = 2 ]')
    assert shared_daemon.wait_state(job_id, "failed", "succeeded")["state"] == "failed"
    shared_daemon.cli("retry", str(job_id))
    job = shared_daemon.wait_state(job_id, "succeeded", "failed")
    assert (job["state"], job["attempt"]) == ("succeeded", 2)


def test_retry_of_a_running_job_stops_and_requeues_it(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    job_id = shared_daemon.submit(recorder.cmd("runs", wait="go"))
    pgid = running_pid(shared_daemon, job_id, members=2)
    shared_daemon.cli("retry", str(job_id))
    wait_for(
        lambda: (
            shared_daemon.job(job_id)["attempt"] == 2
            and shared_daemon.job(job_id)["state"] == "running"
        ),
        what="attempt 2 running",
    )
    wait_group_gone(pgid)
    recorder.go()
    job = shared_daemon.wait_state(job_id, "succeeded", "failed")
    assert (job["state"], job["attempt"]) == ("succeeded", 2)
    assert [r["attempt"] for r in recorder.lines("runs")] == [2]
    attempts = shared_daemon.json("show", str(job_id))["attempts"]
    assert [a["outcome"] for a in attempts] == ["killed", "exit"]


DUMP_ENV = (
    f"{sys.executable} -c 'import json,os; "
    "json.dump(dict(os.environ, PWD_SEEN=os.getcwd(), "
    'JOB_DIR_EXISTS=str(os.path.isdir(os.environ["GPUHERD_JOB_DIR"]))), '
    'open(os.environ["OUT"], "w"))\''
)


def test_job_sees_the_submitters_environment_and_cwd(herd: Herd, tmp_path: Path) -> None:
    where = tmp_path / "submitted-from"
    other = tmp_path / "other"
    where.mkdir()
    other.mkdir()
    # the daemon's own environment must not reach the job: only the submitter's does
    herd.cli("daemon", "start", "--fake-gpus", "1", env={**herd.env, "DAEMON_ONLY": "x"})
    env = {k: v for k, v in herd.env.items() if k != "MPLBACKEND"}
    env.update(MY_CUSTOM_VAR="from the submitter", OUT=str(tmp_path / "env1.json"))
    first = int(
        herd.cli(
            "submit", "-q", "--name", "lr/0.1", "--env", "SEED=7", DUMP_ENV, env=env, cwd=where
        ).stdout
    )
    herd.wait_state(first, "succeeded")
    seen = json.loads((tmp_path / "env1.json").read_text())
    assert seen["MY_CUSTOM_VAR"] == "from the submitter"
    assert seen["SEED"] == "7"
    assert seen["GPUHERD_JOB_ID"] == str(first)
    assert seen["GPUHERD_JOB_NAME"] == "lr/0.1"  # as Slurm's SLURM_JOB_NAME
    assert seen["GPUHERD_ATTEMPT"] == "1"
    assert seen["JOB_DIR_EXISTS"] == "True"
    assert seen["MPLBACKEND"] == "Agg"
    assert seen["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert seen["PWD_SEEN"] == str(where)
    assert "DAEMON_ONLY" not in seen

    env.update(MPLBACKEND="pdf", OUT=str(tmp_path / "env2.json"))
    second = int(herd.cli("submit", "-q", "--cwd", str(other), DUMP_ENV, env=env, cwd=where).stdout)
    herd.wait_state(second, "succeeded")
    seen = json.loads((tmp_path / "env2.json").read_text())
    assert seen["MPLBACKEND"] == "pdf"
    assert seen["PWD_SEEN"] == str(other)
    assert seen["GPUHERD_JOB_ID"] == str(second)
    assert seen["GPUHERD_JOB_NAME"] == ""  # set, and empty: a job without a name


def test_a_batch_sends_its_environment_once_and_a_job_may_bring_its_own(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    shared = {"PATH": os.environ["PATH"], "WHO": "the batch"}
    own = {"PATH": os.environ["PATH"], "WHO": "the job"}
    outs = [tmp_path / f"env{n}.json" for n in range(3)]
    jobs = [
        {
            "command": DUMP_ENV,
            "cwd": str(tmp_path),
            "env": None,
            "env_overrides": {"OUT": str(outs[0])},
        },
        {"command": DUMP_ENV, "cwd": str(tmp_path), "env_overrides": {"OUT": str(outs[1])}},
        {
            "command": DUMP_ENV,
            "cwd": str(tmp_path),
            "env": own,
            "env_overrides": {"OUT": str(outs[2])},
        },
    ]
    ids = shared_daemon.client.post("/jobs", {"jobs": jobs, "env": shared})["ids"]
    for job_id in ids:
        shared_daemon.wait_state(job_id, "succeeded")
    seen = [json.loads(out.read_text()) for out in outs]
    assert [s["WHO"] for s in seen] == ["the batch", "the batch", "the job"]
    assert shared_daemon.job(ids[0])["env_overrides"] == {"OUT": str(outs[0])}


def test_spawn_error_is_reported_and_the_daemon_goes_on(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    folder = tmp_path / "vanishing"
    folder.mkdir()
    job_id = shared_daemon.submit("--hold", "--cwd", str(folder), "--", "true")
    folder.rmdir()
    shared_daemon.cli("release", str(job_id))
    job = shared_daemon.wait_state(job_id, "failed", "succeeded")
    assert (job["state"], job["outcome"]) == ("failed", "spawn_error")
    assert str(folder) in job["message"]
    # The job's folder says it failed, and why, as for a command that ran and failed.
    jobs = shared_daemon.home / "jobs" / str(job_id)
    wait_for(lambda: (jobs / "FAILURE").exists(), 5, "the job folder's FAILURE marker")
    recorded = json.loads((jobs / "job.json").read_text())
    assert (recorded["outcome"], recorded["message"]) == ("spawn_error", job["message"])
    assert (jobs / "attempt-1" / "FAILURE").exists()
    assert json.loads((jobs / "attempt-1" / "attempt.json").read_text()) == recorded
    after = shared_daemon.submit("--", "true")
    shared_daemon.wait_state(after, "succeeded")


def test_show_of_a_failed_job_includes_its_stderr_tail(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("for w in first last; do echo $w-err >&2; done; echo out; exit 3")
    shared_daemon.wait_state(job_id, "failed")
    assert shared_daemon.json("show", str(job_id))["stderr_tail"] == ["first-err", "last-err"]
    human = shared_daemon.cli("show", str(job_id)).stdout
    assert "exit 3" in human and "first-err" in human and "last-err" in human


def test_log_follow_streams_output_until_the_job_ends(shared_daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    job_id = shared_daemon.submit(
        f"echo first; while [ ! -e {go} ]; do sleep 0.02; done; echo second"
    )
    shared_daemon.wait_state(job_id, "running", "succeeded")
    follow = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "log", "-f", str(job_id)],
        env=shared_daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert follow.stdout is not None
        buffer = bytearray()
        assert read_line(follow.stdout.fileno(), buffer) == b"first"
        assert follow.poll() is None
        go.touch()
        assert read_line(follow.stdout.fileno(), buffer) == b"second"
        assert follow.wait(timeout=15) == 0
        assert follow.stdout.read() == b""
    finally:
        follow.kill()
        follow.communicate()
    assert shared_daemon.job(job_id)["state"] == "succeeded"


def test_stdout_and_stderr_are_kept_apart(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("echo to-out; echo to-err >&2; echo more-out")
    shared_daemon.wait_state(job_id, "succeeded")
    assert shared_daemon.cli("log", str(job_id)).stdout == "to-out\nmore-out\n"
    assert shared_daemon.cli("log", "--stderr", str(job_id)).stdout == "to-err\n"


def test_a_silent_job_is_flagged_then_killed_when_asked(shared_daemon: Herd) -> None:
    # Prints once, then nothing: flagged after 1 s of silence, and killed because asked.
    flagged = shared_daemon.submit(
        "--no-output-timeout", "1s", "--", "sh", "-c", "echo hi; sleep 60"
    )
    killed = shared_daemon.submit(
        "--no-output-timeout", "1s", "--on-no-output", "kill", "--", "sh", "-c", "sleep 60"
    )
    job = shared_daemon.wait_state(killed, "failed", timeout=20)
    assert job["outcome"] == "stalled"
    assert any(e["event"] == "stalled" for e in job["events"])

    def stalled() -> dict[str, Any] | None:
        info = shared_daemon.job(flagged)
        return info if (info["reason"] or "").startswith("stalled") else None

    info = wait_for(stalled, 20, "the silent job to be flagged")
    assert info["state"] == "running"  # flagged only
    assert "stalled" in shared_daemon.cli("ls").stdout
    shared_daemon.cli("kill", str(flagged))
