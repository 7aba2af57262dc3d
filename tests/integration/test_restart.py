"""Jobs outlive the daemon: crashes, restarts, the three ways to stop, and a second daemon."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import psutil
import pytest

from conftest import (
    Herd,
    Recorder,
    group_members,
    homes_on_one_socket,
    read_line,
    wait_dead,
    wait_for,
    wait_for_long_poll,
)
from gpuherd.client import Client
from gpuherd.client_wait import Waited
from gpuherd.errors import NotRunning


def pids(herd: Herd, ids: list[int]) -> dict[int, int]:
    return {job_id: herd.json("show", str(job_id))["pid"] for job_id in ids}


def wait_running(herd: Herd, ids: list[int]) -> None:
    for job_id in ids:
        wait_for(
            lambda j=job_id: herd.job(j)["state"] == "running" and herd.job(j)["pid"],
            what=f"job {job_id} running with a pid",
        )


def attempt_dir(herd: Herd, job_id: int, attempt: int = 1) -> Path:
    return herd.home / "jobs" / str(job_id) / f"attempt-{attempt}"


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_crashed_daemon_reattaches_running_jobs(daemon: Herd, recorder: Recorder) -> None:
    codes = [0, 3, 4, 5]
    running = daemon.submit_lines([recorder.cmd("runs", wait="go", exit=c) for c in codes])
    queued = daemon.submit_lines([recorder.cmd("runs"), recorder.cmd("runs")])
    wait_running(daemon, running)
    before = pids(daemon, running)
    assert [daemon.job(j)["state"] for j in queued] == ["queued", "queued"]

    daemon.kill9()
    assert all(alive(pid) for pid in before.values())
    daemon.start()  # no flags: the saved GPU configuration is used again
    assert [g["index"] for g in daemon.json("gpus")["gpus"]] == [0, 1, 2, 3]
    assert pids(daemon, running) == before
    assert all(daemon.job(j)["state"] == "running" for j in running)
    assert [daemon.job(j)["state"] for j in queued] == ["queued", "queued"]

    recorder.go()
    for job_id, code in zip(running, codes, strict=True):
        job = daemon.wait_state(job_id, "succeeded", "failed", "lost", "killed")
        assert (job["state"], job["exit_code"]) == ("succeeded" if code == 0 else "failed", code)
    for job_id in queued:
        daemon.wait_state(job_id, "succeeded")
    ran = sorted(r["id"] for r in recorder.lines("runs"))
    assert ran == sorted(running + queued)  # each exactly once
    assert all(daemon.job(j)["attempt"] == 1 for j in running + queued)


def test_jobs_that_ended_while_the_daemon_was_down(daemon: Herd, recorder: Recorder) -> None:
    ids = daemon.submit_lines([recorder.cmd("runs", wait="go", exit=c) for c in (0, 7)])
    wait_running(daemon, ids)
    groups = pids(daemon, ids)
    daemon.kill9()
    recorder.go()
    for job_id, pgid in groups.items():
        wait_for(lambda p=pgid: not group_members(p), what=f"job {job_id} to end")
    ended = {r["id"]: r["end"] for r in recorder.lines("runs")}
    restarted = time.time()

    daemon.start()
    ok = daemon.wait_state(ids[0], "succeeded", "failed", "lost")
    bad = daemon.wait_state(ids[1], "succeeded", "failed", "lost")
    assert (ok["state"], ok["outcome"], ok["exit_code"]) == ("succeeded", "exit", 0)
    assert (bad["state"], bad["outcome"], bad["exit_code"]) == ("failed", "exit", 7)
    for job in (ok, bad):
        assert ended[job["id"]] - 1 <= job["ended_at"] <= restarted  # when it really ended
    assert len(recorder.lines("runs")) == 2


def test_job_killed_while_the_daemon_was_down_is_lost(daemon: Herd, recorder: Recorder) -> None:
    once = daemon.submit(recorder.cmd("runs", wait="go"))
    again = daemon.submit("--retries", "1", recorder.cmd("runs", wait="go"))
    wait_running(daemon, [once, again])
    groups = pids(daemon, [once, again])
    daemon.kill9()
    for pgid in groups.values():
        os.killpg(pgid, signal.SIGKILL)
        wait_for(lambda p=pgid: not group_members(p), what=f"group {pgid} gone")

    daemon.start()
    job = daemon.wait_state(once, "lost", "failed", "succeeded", "killed", timeout=5)
    assert (job["state"], job["outcome"]) == ("lost", "lost")
    job = wait_for(
        lambda: (j := daemon.job(again))["attempt"] == 2 and j["state"] == "running" and j,
        timeout=5,
        what="the job with --retries 1 running its attempt 2",
    )
    recorder.go()
    job = daemon.wait_state(again, "succeeded", "failed", "lost")
    assert (job["state"], job["attempt"]) == ("succeeded", 2)
    attempts = daemon.json("show", str(again))["attempts"]
    assert [a["outcome"] for a in attempts] == ["lost", "exit"]
    assert [(r["id"], r["attempt"]) for r in recorder.lines("runs")] == [(again, 2)]


def test_a_job_lost_after_a_stop_ran_until_the_stop_at_least(daemon: Herd) -> None:
    """A job that replaced its shell writes no end, and one that wrote nothing either had no
    sign of life but its start: lost at the next start, it was recorded as ending then (run
    time 0.0s), though the daemon that stopped had seen it run until its stop."""
    job_id = daemon.submit("--", "exec sleep 100")
    wait_running(daemon, [job_id])
    started = daemon.job(job_id)["started_at"]
    wait_for(lambda: time.time() > started + 1.0, what="a second of the job's run")
    (pgid,) = pids(daemon, [job_id]).values()
    before_stop = time.time()
    daemon.cli("daemon", "stop")
    os.killpg(pgid, signal.SIGKILL)
    wait_for(lambda: not group_members(pgid), what=f"group {pgid} gone")

    daemon.start()
    job = daemon.wait_state(job_id, "lost", "failed", "succeeded", "killed", timeout=5)
    assert job["state"] == "lost"
    assert before_stop <= job["ended_at"] <= time.time(), (started, before_stop, job)
    # Only the stop that follows: a later start takes nothing from it.
    daemon.cli("daemon", "stop")
    daemon.start()
    assert daemon.job(job_id)["ended_at"] == job["ended_at"]


def test_kill_acknowledged_before_a_crash_still_happens(daemon: Herd) -> None:
    # one string: the job's own shell ignores TERM, so only the SIGKILL after --grace ends it
    job_id = daemon.submit("--grace", "1", "trap '' TERM; sleep 100 & wait")
    wait_running(daemon, [job_id])
    pgid = daemon.job(job_id)["pid"]
    wait_for(lambda: len(group_members(pgid)) >= 2, what="the job's sleep")
    daemon.cli("kill", str(job_id))  # "stopping (SIGTERM, then SIGKILL after 1s)"
    daemon.kill9()
    daemon.start()
    job = daemon.wait_state(job_id, "killed", "failed", "lost", "succeeded", timeout=6)
    assert (job["state"], job["outcome"]) == ("killed", "killed")
    wait_for(lambda: not group_members(pgid), what="the job's group to be gone")


def test_a_crash_right_after_a_spawn_reattaches_to_the_job_not_a_second_copy(
    herd: Herd, tmp_path: Path
) -> None:
    # The job's bash kills the daemon (its parent) before its first line, as a crash within
    # moments of a spawn would: no pid recorded anywhere yet. It waits for `go` to go on.
    runs, go, crashed = tmp_path / "runs", tmp_path / "go", tmp_path / "crashed"
    startup = tmp_path / "startup.sh"
    startup.write_text(
        f'[ -e {crashed} ] || {{ touch {crashed}; kill -9 "$PPID"; }}\n'
        f"while [ ! -e {go} ]; do sleep 0.02; done\n"
    )
    herd.start("--fake-gpus", "1")
    daemon_pid = herd.pid
    env = {**herd.env, "GPUHERD_SHELL": "bash", "BASH_ENV": str(startup)}
    submitted = herd.cli("submit", "-q", "--", f'echo "run $$" >> {runs}', env=env)
    job_id = int(submitted.stdout.split()[0])
    wait_dead(psutil.Process(daemon_pid))
    herd.start()
    go.touch()
    job = herd.wait_state(job_id, "succeeded", "failed", "lost", "killed")
    assert (job["state"], job["attempt"]) == ("succeeded", 1)
    assert len(runs.read_text().splitlines()) == 1  # once: it was not queued again meanwhile
    assert "daemon stopped before spawn" not in herd.cli("show", str(job_id)).stdout


def test_stop_leave_drain_and_kill(herd: Herd, recorder: Recorder) -> None:
    herd.start("--fake-gpus", "1")
    first = herd.submit(recorder.cmd("runs", wait="go1"))
    second = herd.submit(recorder.cmd("runs", wait="go2"))
    wait_running(herd, [first])
    pid = herd.job(first)["pid"]

    # plain stop: the running job goes on, the next daemon re-attaches
    answer = herd.cli("daemon", "stop").stdout
    assert "stopping; 1 running job goes on and the next daemon re-attaches" in answer
    assert not herd.is_up()
    assert alive(pid)
    herd.start()
    assert (herd.job(first)["state"], herd.job(first)["pid"]) == ("running", pid)
    assert herd.job(second)["state"] == "queued"

    # --drain: waits for the running job, starts nothing new
    stop = herd.popen("daemon", "stop", "--drain")
    try:
        assert stop.stdout is not None
        assert b"waiting for 1" in read_line(stop.stdout.fileno(), bytearray())
        assert stop.poll() is None and herd.is_up()
        recorder.go("go1")
        assert stop.wait(timeout=15) == 0
    finally:
        stop.kill()
        stop.communicate()
    assert not herd.is_up()
    assert not attempt_dir(herd, second).exists()  # never started

    herd.start()
    assert herd.job(first)["state"] == "succeeded"
    wait_running(herd, [second])
    assert herd.job(second)["attempt"] == 1
    pgid = herd.job(second)["pid"]

    # --kill: the running job is killed, and stays killed for the next daemon
    herd.cli("daemon", "stop", "--kill")
    assert not herd.is_up()
    wait_for(lambda: not group_members(pgid), what="the killed job's group to be gone")
    herd.start()
    job = herd.job(second)
    assert (job["state"], job["outcome"]) == ("killed", "killed")
    assert [(r["id"], r["attempt"]) for r in recorder.lines("runs")] == [(first, 1)]


def test_a_daemon_stop_kill_cut_short_by_a_crash_still_kills(daemon: Herd, tmp_path: Path) -> None:
    runs, termed = tmp_path / "runs", tmp_path / "termed"
    job_id = daemon.submit(
        "--retries",
        "2",
        f"echo run >> {runs}; trap 'touch {termed}; sleep 1; exit 1' TERM; sleep 60 & wait",
    )
    wait_running(daemon, [job_id])
    stop = daemon.popen("daemon", "stop", "--kill")
    try:
        wait_for(termed.exists, what="the job to get its SIGTERM")
        daemon.kill9()  # in the job's grace: the stop must outlive this daemon
        _, err = stop.communicate(timeout=15)
        assert stop.returncode == 1  # it did not say "daemon stopped"
        assert "ended before it had stopped (killed or crashed)" in err.decode()
    finally:
        stop.kill()
        stop.communicate()
    daemon.start()
    job = daemon.wait_state(job_id, "killed", "failed", "succeeded", "lost")
    assert (job["state"], job["attempt"]) == ("killed", 1)  # not failed, not run again
    assert runs.read_text() == "run\n"


def test_second_daemon_is_refused_and_the_first_keeps_running(daemon: Herd) -> None:
    pid = daemon.pid
    proc = daemon.cli("daemon", "start", "--fake-gpus", "2", check=False)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:"), proc.stderr
    assert "already running" in lines[0] and "Traceback" not in proc.stderr

    # started directly (as `daemon start` does), the home's lock refuses it too
    direct = subprocess.run(
        [sys.executable, "-m", "gpuherd.daemon", "--home", str(daemon.home), "--fake-gpus", "2"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert direct.returncode != 0 and "already running" in direct.stderr
    assert "Traceback" not in direct.stderr

    assert daemon.pid == pid
    assert len(daemon.json("gpus")["gpus"]) == 4
    job_id = daemon.submit("--", "true")
    daemon.wait_state(job_id, "succeeded")


def test_cli_without_a_daemon_says_how_to_start_one(herd: Herd) -> None:
    proc = herd.cli("ls", check=False)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:"), proc.stderr
    assert "gpuherd daemon start" in lines[0]
    assert proc.stdout == ""


def test_client_without_a_daemon_closes_its_socket(herd: Herd) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Client(herd.home).is_up() is False
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


NO_REAPER = """
import ctypes, os, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the daemon becomes our child
gpuherd = [sys.executable, "-m", "gpuherd"]
subprocess.run([*gpuherd, "daemon", "start", "--fake-gpus", "1"], check=True)
try:
    # Returns, or hangs for ever: 20 s tells them apart (the daemon's own shutdown takes ~2 s,
    # plus interpreter starts, slow on a loaded machine).
    subprocess.run([*gpuherd, "daemon", "stop"], timeout=20, check=True)
    print("stopped")
except subprocess.TimeoutExpired:
    print("hung")
"""  # and we never reap it, like a container's pid 1 without an init


def test_daemon_stop_returns_even_if_nobody_reaps_the_daemon(herd: Herd) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", NO_REAPER],
        env=herd.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "stopped"


def test_a_lost_database_never_gives_a_new_job_an_old_jobs_folder(daemon: Herd) -> None:
    ids = daemon.submit_lines(["echo first", "echo second"])
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")
    daemon.cli("daemon", "stop")
    for name in os.listdir(daemon.home):  # herd.db and its -wal/-shm: lost, or emptied
        if name.startswith("herd.db"):
            os.unlink(daemon.home / name)

    daemon.start("--fake-gpus", "1")  # the GPU configuration went with the database
    new = daemon.submit("--", "echo third")
    assert new == ids[-1] + 1  # before: job 1 again, writing into job 1's folder
    daemon.wait_state(new, "succeeded")
    for job_id, text in zip([*ids, new], ["first", "second", "third"], strict=True):
        assert (attempt_dir(daemon, job_id) / "stdout.log").read_text() == f"{text}\n"
    assert "new jobs are numbered after it" in (daemon.home / "daemon.log").read_text()


def test_wait_goes_on_through_a_restart_and_a_crash(daemon: Herd, tmp_path: Path) -> None:
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
        # Its long poll is open: it holds a connection to the daemon's socket.
        process = psutil.Process(waiting.pid)
        wait_for_long_poll(process)
        daemon.cli("daemon", "stop")  # an upgrade's restart: the job goes on
        daemon.start()
        daemon.kill9()  # then a crash
        daemon.start()
        assert waiting.poll() is None, waiting.communicate()  # still waiting, for the job
        go.touch()
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert out == "1 of 1 job succeeded\n"
    assert "the daemon went away; waiting for it to come back" in err


def test_a_wait_whose_daemon_went_after_listing_its_jobs_waits_for_the_next(
    daemon: Herd, tmp_path: Path
) -> None:
    # A `gpuherd wait` begun as the daemon restarted: the old one listed its jobs, none ran
    # at its first long poll, and it gave up as if none had run at all ("no gpuherd daemon is
    # running", exit 3; the test above, at a load of 12, 1 in 12).
    go = tmp_path / "go"
    job = daemon.running_until(go)
    client = Client(daemon.home)
    assert client.get(f"/jobs/{job}")["state"] == "running"  # as a wait lists its jobs
    daemon.cli("daemon", "stop")  # the job goes on
    with pytest.raises(NotRunning):  # a client no daemon answered: none ran, said at once
        Client(daemon.home).wait_for([job], time.monotonic() + 30)
    waited: list[Waited] = []
    waiting = threading.Thread(
        target=lambda: waited.append(
            client.wait_for([job], time.monotonic() + 60, answered=client.answered)
        )
    )
    waiting.start()
    try:
        daemon.start()
        go.touch()
    finally:
        waiting.join(60)
    assert [w.states for w in waited] == [{job: "succeeded"}]


def test_a_daemon_never_takes_the_socket_another_homes_daemon_listens_on(
    tmp_path: Path,
) -> None:
    with homes_on_one_socket(tmp_path) as (first, second):
        first.start("--fake-gpus", "1")
        refused = second.cli("daemon", "start", "--fake-gpus", "1", check=False)
        assert refused.returncode == 1
        assert "another daemon listens on" in refused.stderr
        assert "GPUHERD_SOCKET shared by two homes" in refused.stderr
        # Started at the same moment, the second daemon itself finds the socket taken.
        direct = subprocess.run(
            [
                sys.executable,
                "-m",
                "gpuherd.daemon",
                "--home",
                str(second.home),
                "--fake-gpus",
                "1",
            ],
            env=second.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert direct.returncode == 1 and "another daemon listens on" in direct.stderr
        status = first.cli("daemon", "status", "--json")
        assert json.loads(status.stdout)["home"] == str(tmp_path / "a")  # still the first's


def test_wait_without_a_daemon_exits_3_not_as_a_failed_job(herd: Herd) -> None:
    # 1 means "a job did not succeed": a script must tell that from "no daemon to ask".
    for ids in (["1"], []):  # without ids, it would first ask the daemon what to wait for
        gone = herd.cli("wait", *ids, check=False)
        assert gone.returncode == 3, ids
        assert gone.stderr.startswith("gpuherd: error: no gpuherd daemon is running for")


def test_a_reattached_job_that_replaced_its_shell_is_killed_not_lost(daemon: Herd) -> None:
    """After a restart the daemon is not the job's parent, and `exec` left no shell to record
    an exit status: a kill or timeout of it is still recorded as such (it was retried as lost)."""
    killed = daemon.submit("--retries", "2", "--", "exec sleep 100")
    timed = daemon.submit("--timeout", "3s", "--", "exec sleep 100")
    for job in (killed, timed):
        daemon.wait_state(job, "running")
    daemon.cli("daemon", "stop")
    daemon.start()
    daemon.cli("kill", str(killed))
    job = daemon.wait_state(killed, "killed", "queued", "lost", "failed")
    assert (job["state"], job["outcome"], job["attempt"]) == ("killed", "killed", 1)
    job = daemon.wait_state(timed, "failed", "lost", timeout=20)
    assert (job["state"], job["outcome"]) == ("failed", "timeout")


def test_a_restart_during_a_kills_grace_sends_no_second_sigterm(
    daemon: Herd, tmp_path: Path
) -> None:
    """A second SIGTERM means "hurry, skip the checkpoint" to some programs: a daemon that
    re-attaches to a job being stopped only keeps its SIGKILL due."""
    terms, go = tmp_path / "terms", tmp_path / "go"
    job = daemon.submit(
        "--grace", "30s", "--",
        f"trap 'echo term >> {terms}' TERM; while [ ! -e {go} ]; do sleep 0.05; done",
    )  # fmt: skip
    daemon.wait_state(job, "running")
    daemon.cli("kill", str(job))
    wait_for(terms.exists, what="the job to take the SIGTERM")
    daemon.cli("daemon", "stop")
    daemon.start()
    assert daemon.job(job)["state"] == "running"  # re-attached, still within its grace
    go.touch()
    assert daemon.wait_state(job, "killed", "failed", "succeeded")["state"] == "killed"
    assert terms.read_text() == "term\n"
