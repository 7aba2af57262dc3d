"""A daemon that holds its home but does not answer: stopped (SIGSTOP, Ctrl-Z) or stuck.
`daemon start`, `status` and `stop` each waited the client's 60 s for its answer (and `start`
then began another daemon, which found the home taken). Each now says within ANSWER_WITHIN,
on one line, which daemon it is and what ends the wait; the advice given is followed here."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import gpuherd
from conftest import Herd, load_stretch, read_line, wait_dead, wait_for
from gpuherd.client import Client
from gpuherd.daemon_presence import lock_holder
from gpuherd.errors import DaemonError, NoAnswer
from gpuherd.keep_alive import MISSED

QUICK = 20.0
"""Seconds a command may take against a daemon that does not answer: the point is not 60."""

ANSWER_WITHIN = "2"
"""The wait for an answer in these tests (GPUHERD_TEST_ANSWER_WITHIN), not the real 5 s:
each test waits it out at least once."""


@pytest.fixture(autouse=True)
def answer_sooner(herd: Herd) -> None:
    herd.env["GPUHERD_TEST_ANSWER_WITHIN"] = ANSWER_WITHIN


def not_answering(herd: Herd, pid: int, how: str) -> str:
    return (
        f"gpuherd: error: a daemon (pid {pid}) holds {herd.home} but did not answer within "
        f"{ANSWER_WITHIN}s: {how}`kill -9 {pid}` ends it (its running jobs go on, and the "
        "next `gpuherd daemon start` re-attaches to them)\n"
    )


def stop(pid: int) -> None:
    """SIGSTOP the daemon, as Ctrl-Z or a debugger would, and wait until it is stopped."""
    os.kill(pid, signal.SIGSTOP)
    process = psutil.Process(pid)
    wait_for(lambda: process.status() == psutil.STATUS_STOPPED, what="the daemon stopped")


def resumed(herd: Herd, pid: int) -> None:
    """Wait until `daemon status` says the daemon `pid`, sent SIGCONT, runs: it answers again.
    (Just resumed on a loaded machine, it may take more than the ANSWER_WITHIN of these tests
    to answer the first time; a daemon still stopped never does.)"""

    def running() -> bool:
        said = herd.cli("daemon", "status", check=False)
        return said.returncode == 0 and said.stdout.startswith(f"running: pid {pid},")

    wait_for(running, what=f"`daemon status` to say the resumed daemon {pid} runs")


@pytest.fixture
def stopped(daemon: Herd) -> Iterator[int]:
    """The daemon's pid, the daemon stopped (resumed at the end, for its stop)."""
    pid = daemon.pid
    try:
        stop(pid)
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("verb", ["start", "status", "stop"])
def test_a_stopped_daemon_is_said_within_seconds(daemon: Herd, stopped: int, verb: str) -> None:
    began = time.monotonic()
    proc = daemon.cli(
        "daemon", verb, *(["--fake-gpus", "4"] if verb == "start" else []), check=False
    )
    took = time.monotonic() - began
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )
    assert took < QUICK
    assert lock_holder(daemon.home) == stopped  # no other daemon was started meanwhile


def test_the_advice_for_a_stopped_daemon_works(daemon: Herd) -> None:
    job = daemon.submit("--gpus", "0", "--", "sleep", "60")
    daemon.wait_state(job, "running")
    pid = daemon.pid
    stop(pid)
    said = daemon.cli("daemon", "status", check=False).stderr
    assert f"`kill -CONT {pid}` resumes it" in said
    os.kill(pid, signal.SIGCONT)
    resumed(daemon, pid)
    stop(pid)
    assert f"`kill -9 {pid}` ends it" in said
    os.kill(pid, signal.SIGKILL)
    wait_dead(psutil.Process(pid))
    daemon.start("--fake-gpus", "4")
    assert daemon.pid != pid
    assert daemon.wait_state(job, "running")["state"] == "running"  # re-attached, still running
    daemon.cli("kill", str(job))


@pytest.fixture
def stuck(herd: Herd) -> Iterator[int]:
    """A daemon that listens but never serves (GPUHERD_TEST_SERVE_DELAY), not stopped: stuck."""
    env = {**herd.env, "GPUHERD_TEST_SERVE_DELAY": "600"}
    args = [sys.executable, "-m", "gpuherd.daemon", "--home", str(herd.home), "--fake-gpus", "1"]
    herd.home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: lock_holder(herd.home) == proc.pid, what="the daemon's lock")
        wait_for(herd.client.socket_path.exists, what="the daemon's socket")
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_a_stuck_daemon_is_said_within_seconds_and_kill_9_ends_it(herd: Herd, stuck: int) -> None:
    began = time.monotonic()
    proc = herd.cli("daemon", "status", check=False)
    assert time.monotonic() - began < QUICK
    how = (
        "stuck, busy with a large submission (wait a moment and try again), or still starting "
        "(`gpuherd daemon log` may say which); "
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", not_answering(herd, stuck, how))
    os.kill(stuck, signal.SIGKILL)  # the advice
    wait_dead(psutil.Process(stuck))
    herd.start("--fake-gpus", "1")
    assert herd.pid != stuck


def test_any_command_names_a_stopped_daemon_within_seconds(daemon: Herd, stopped: int) -> None:
    """`ls` (and every command but `daemon start`, `status` and `stop`) waited the client's
    60 s, then said "the daemon did not answer within 60s", naming neither it nor the way on."""
    began = time.monotonic()
    proc = daemon.cli("ls", check=False, timeout=QUICK)
    assert time.monotonic() - began < QUICK
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )


def test_a_big_submit_names_a_stopped_daemon_within_seconds(
    daemon: Herd, stopped: int, tmp_path: Path
) -> None:
    """A request bigger than the socket's buffer (`submit --file` of thousands of lines) is
    not all sent to a stopped daemon, which reads none of it: the send waited its 60 s, then
    named the daemon; it is now said as soon as the answer's wait would say it."""
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("".join(f"echo {n} {'x' * 200}\n" for n in range(5000)))  # ~1 MB
    began = time.monotonic()
    proc = daemon.cli("submit", "--hold", "--file", str(jobs), check=False, timeout=QUICK)
    assert time.monotonic() - began < QUICK
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )


def connected(pid: int) -> bool:
    """Whether the process has a connection open on a Unix socket (to the daemon)."""
    return bool(psutil.Process(pid).net_connections(kind="unix"))


def test_a_wait_whose_daemon_is_stopped_says_so_within_seconds(daemon: Herd) -> None:
    """A wait's long poll is cut short by a stopped daemon: it answers nothing until resumed.
    (It went on 60 s, then waited 60 more for the daemon to "come back", then said to start
    one, which `daemon start` refused.)"""
    job = daemon.submit("--", "sleep", "60")
    daemon.wait_state(job, "running")
    pid = daemon.pid
    waiter = daemon.popen("wait", str(job))
    try:
        wait_for(lambda: connected(waiter.pid), what="the wait to ask the daemon")
        stop(pid)
        _, err = waiter.communicate(timeout=QUICK)
    finally:
        waiter.kill()
        waiter.wait()
        os.kill(pid, signal.SIGCONT)
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; "
    assert (waiter.returncode, err.decode()) == (3, not_answering(daemon, pid, how))
    daemon.cli("kill", str(job))


def test_a_busy_daemon_is_waited_for_past_the_look(daemon: Herd) -> None:
    """A request the daemon holds longer than ANSWER_WITHIN (a wait's long poll) goes on while
    the daemon runs: only a stopped one is given up on early."""
    job = daemon.submit("--", "sleep", str(float(ANSWER_WITHIN) + 3))
    daemon.wait_state(job, "running")
    waited = daemon.cli("wait", str(job), timeout=QUICK)
    assert "succeeded" in waited.stdout, waited.stdout


def test_a_silent_daemon_is_named_at_the_clients_timeout(herd: Herd, stuck: int) -> None:
    """Not stopped, silent past the client's own timeout (60 s; 1 s here): named, with what
    ends the wait (it said only "the daemon did not answer within 60s")."""
    with pytest.raises(NoAnswer) as refused:
        Client(herd.home, timeout=1.0).get("/jobs")
    how = (
        "stuck, busy with a large submission (wait a moment and try again), or still starting "
        "(`gpuherd daemon log` may say which); "
    )
    said = not_answering(herd, stuck, how).replace(f"within {ANSWER_WITHIN}s", "within 1s")
    assert f"gpuherd: error: {refused.value}\n" == said


def followed_line(follower: subprocess.Popen[bytes]) -> str:
    """The first line `log -f` printed: the follow's stream is open (not a request before)."""
    assert follower.stdout is not None
    return read_line(follower.stdout.fileno(), bytearray()).decode()


def stopped_following(
    herd: Herd, job: int, pid: int, within: str, again: str = "`gpuherd log -f {job}`"
) -> str:
    """The line of a follow whose daemon (`pid`, stopped) did not answer `within` seconds;
    `again` follows on (the CLI's `log -f`, or the Python API's `job.follow()`)."""
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; "
    said = not_answering(herd, pid, how).replace(f"within {ANSWER_WITHIN}s", f"within {within}s")
    return (
        f"gpuherd: error: stopped following job {job}'s log: "
        + said.removeprefix("gpuherd: error: ").removesuffix("\n")
        + f"; `gpuherd daemon status` looks again, {again.format(job=job)} follows on\n"
    )


def test_log_f_of_a_stopped_daemon_says_so_within_seconds(daemon: Herd) -> None:
    """`log -f` read its stream without a time limit: a daemon stopped (Ctrl-Z) held it for
    ever, where every other command names it within seconds."""
    job = daemon.submit("--", "echo ready; sleep 60")
    pid = daemon.pid
    follower = daemon.popen("log", "-f", str(job))
    try:
        assert followed_line(follower) == "ready"
        stop(pid)
        began = time.monotonic()
        _, err = follower.communicate(timeout=QUICK)
        assert time.monotonic() - began < QUICK
    finally:
        follower.kill()
        follower.wait()
        os.kill(pid, signal.SIGCONT)
    assert (follower.returncode, err.decode()) == (1, stopped_following(daemon, job, pid, "2"))
    resumed(daemon, pid)  # the advice
    daemon.cli("kill", str(job))


@pytest.fixture
def kept_alive(herd: Herd) -> Herd:
    """A daemon whose follows send a keep-alive after 0.3 s of silence (10 s in use), so a
    client gives up on one silent for 0.9 s."""
    herd.env["GPUHERD_TEST_KEEP_ALIVE"] = "0.3"
    herd.start("--fake-gpus", "1")
    return herd


def test_a_follow_gives_up_once_the_keep_alives_stop(kept_alive: Herd) -> None:
    """A daemon that stops answering, not yet seen stopped (a look comes after 600 s here, as
    for a daemon that is hung, not stopped): its missed keep-alives end the follow."""
    job = kept_alive.submit("--", "echo ready; sleep 60")
    pid = kept_alive.pid
    env = {**kept_alive.env, "GPUHERD_TEST_ANSWER_WITHIN": "600"}
    follower = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "log", "-f", str(job)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert followed_line(follower) == "ready"
        stop(pid)
        _, err = follower.communicate(timeout=QUICK)
    finally:
        follower.kill()
        follower.wait()
        os.kill(pid, signal.SIGCONT)
    said = stopped_following(kept_alive, job, pid, "0.9")
    assert (follower.returncode, err.decode()) == (1, said)
    kept_alive.cli("kill", str(job))


@pytest.fixture
def patiently_kept_alive(herd: Herd) -> tuple[Herd, float]:
    """A daemon whose follows send a keep-alive after a second of silence (more on a loaded
    machine: load_stretch), and that second: a daemon that must keep its follows alive itself
    (not stopped) may be held a second now and then on a loaded machine, and kept_alive's
    0.3 s (a client gives up after 0.9 s) left it no time for that."""
    interval = round(load_stretch(), 1)
    herd.env["GPUHERD_TEST_KEEP_ALIVE"] = f"{interval:g}"
    herd.start("--fake-gpus", "1")
    return herd, interval


def test_a_quiet_job_is_followed_through_its_silence(
    patiently_kept_alive: tuple[Herd, float], tmp_path: Path
) -> None:
    """Silent for many keep-alive intervals, the job is followed on: the keep-alives, not
    its text, keep the follow's wait going."""
    herd, interval = patiently_kept_alive
    go = tmp_path / "go"
    job = herd.submit("--", f"echo a; until [ -e {go} ]; do sleep 0.05; done; echo b")
    follower = herd.popen("log", "-f", str(job))
    try:
        assert followed_line(follower) == "a"
        # The job is silent for twice what a follow without keep-alives would wait through
        # (MISSED intervals): the time itself is what is tested, not a wait for something.
        time.sleep(2 * MISSED * interval)
        go.touch()
        out, err = follower.communicate(timeout=QUICK)
    finally:
        follower.kill()
        follower.wait()
    assert (follower.returncode, out, err) == (0, b"b\n", b"")


def test_job_follow_raises_once_its_daemon_stops_answering(kept_alive: Herd) -> None:
    """`job.follow()` in Python waited for ever on a stopped daemon; it raises DaemonError."""
    herd = gpuherd.connect(kept_alive.home, start=False)
    job = herd.submit("echo ready; sleep 60", gpus=0)
    pid = kept_alive.pid
    texts = job.follow()
    try:
        assert next(texts) == "ready\n"
        stop(pid)
        began = time.monotonic()
        with pytest.raises(DaemonError) as refused:
            next(texts)
        assert time.monotonic() - began < QUICK
    finally:
        os.kill(pid, signal.SIGCONT)
    said = stopped_following(kept_alive, job.id, pid, "0.9", "`job.follow()`")
    assert f"gpuherd: error: {refused.value}\n" == said  # (not the CLI's `log -f`)
    job.kill()


MAYBE_DONE = (
    "; the request was sent, so the daemon may still carry it out once it answers: look with "
    "`gpuherd ls --all` (were the jobs queued? killed?) before asking again\n"
)


def test_a_submit_a_stopped_daemon_did_not_answer_says_it_may_still_be_done(
    daemon: Herd, stopped: int
) -> None:
    """The submission sits in the socket and the daemon queues it once resumed: a user told
    only that it did not answer submitted again, and got the jobs twice."""
    proc = daemon.cli("submit", "--hold", "--", "true", check=False, timeout=QUICK)
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    said = not_answering(daemon, stopped, how).removesuffix("\n") + MAYBE_DONE
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", said)
    os.kill(stopped, signal.SIGCONT)
    wait_for(lambda: len(daemon.ls_all()) == 1, what="the submission queued once resumed")


def test_a_kill_a_stopped_daemon_did_not_answer_says_it_may_still_be_done(daemon: Herd) -> None:
    job = daemon.submit("--", "sleep", "60")
    daemon.wait_state(job, "running")
    pid = daemon.pid
    stop(pid)
    try:
        proc = daemon.cli("kill", str(job), check=False, timeout=QUICK)
        looked = daemon.cli("show", str(job), check=False, timeout=QUICK)  # a read: as it was
    finally:
        os.kill(pid, signal.SIGCONT)
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; "
    said = not_answering(daemon, pid, how)
    assert (proc.returncode, proc.stderr) == (1, said.removesuffix("\n") + MAYBE_DONE)
    assert (looked.returncode, looked.stderr) == (1, said)
    assert daemon.wait_state(job, "killed")["state"] == "killed"  # done once it answered


def test_a_python_submit_a_daemon_did_not_answer_says_it_may_still_be_done(daemon: Herd) -> None:
    herd = gpuherd.connect(daemon.home, start=False)
    herd.client.timeout = 1.0  # (the client's 60 s, shortened: any silence past it)
    pid = daemon.pid
    stop(pid)
    try:
        with pytest.raises(NoAnswer) as refused:
            herd.submit("true", gpus=0, hold=True)
    finally:
        os.kill(pid, signal.SIGCONT)
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; "
    said = not_answering(daemon, pid, how).replace(f"within {ANSWER_WITHIN}s", "within 1s")
    assert f"gpuherd: error: {refused.value}\n" == said.removesuffix("\n") + MAYBE_DONE
    wait_for(lambda: len(herd.jobs(all=True)) == 1, what="the submission queued once resumed")
