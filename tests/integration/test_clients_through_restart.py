"""Clients during a `gpuherd daemon restart`. Between the old daemon letting go of the home and
the new one listening, every command and Python call failed at once, exit 3: "no gpuherd
daemon is running ...: start it again with `gpuherd daemon start`" (and that start said "a
daemon is already running"). A client that finds no daemon while a restart's note is in the
home, its restart alive, now waits for the new daemon (client_restart.py); a note whose
restart died, or a restart that ends without a daemon, is not waited for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import Herd, read_line, wait_for
from waits import load_stretch

PLAYED_RESTART = """
import sys, time
from pathlib import Path
from gpuherd.cli.main import main
from gpuherd.restart_marker import restart_under_way

home, go, starts = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "start"
with restart_under_way(home):
    print("noted", flush=True)
    while not go.exists():
        time.sleep(0.02)
    if starts:
        main(["daemon", "start", "--fake-gpus", "1"])
"""
"""A `daemon restart` between its stop and its start, held there until the file `go` exists:
its note in the home, as the real one keeps it, then its start (or none: a restart that
failed to start one)."""

PYTHON_CLIENT = """
import sys
import gpuherd

herd = gpuherd.connect(sys.argv[1], start=False)
job = herd.submit("echo from python", gpus=0)
print(job.id, job.wait(), flush=True)
"""


def waiting_line(pid: int) -> bytes:
    return (
        f"gpuherd: the daemon is restarting (`gpuherd daemon restart`, pid {pid}): waiting up "
        "to 35s for the new one to answer"
    ).encode()


def played_restart(herd: Herd, go: Path, starts: bool) -> subprocess.Popen[bytes]:
    """A restart of the home's daemon, its note in the home, held before its start."""
    restart = subprocess.Popen(
        [
            sys.executable,
            "-c",
            PLAYED_RESTART,
            str(herd.home),
            str(go),
            "start" if starts else "none",
        ],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert restart.stdout is not None
    assert read_line(restart.stdout.fileno(), bytearray(), 30 * load_stretch()) == b"noted"
    return restart


def ended(call: subprocess.Popen[bytes], timeout: float = 60) -> tuple[int, bytes, bytes]:
    """A process's exit status and output, once it has ended (within `timeout`, stretched)."""
    out, err = call.communicate(timeout=timeout * load_stretch())
    return call.returncode, out, err


def ended_all(calls: list[subprocess.Popen[bytes]]) -> None:
    """Each of `calls` ended (killed if it runs yet), its pipes closed."""
    for call in calls:
        if call.poll() is None:
            call.kill()
        if call.stdout is not None and not call.stdout.closed:
            call.communicate()


def stopped_with_a_job_done(herd: Herd) -> int:
    """A home whose daemon ran one job (`echo hi`), then stopped: the job's id."""
    herd.start("--fake-gpus", "1")
    done = herd.submit("--", "echo hi")
    herd.wait_state(done, "succeeded")
    herd.cli("daemon", "stop")
    return done


def test_commands_begun_while_a_restart_has_no_daemon_wait_for_the_new_one(
    herd: Herd, tmp_path: Path
) -> None:
    done = stopped_with_a_job_done(herd)
    go = tmp_path / "go"
    restart = played_restart(herd, go, starts=True)
    calls = {
        "submit": herd.popen("submit", "-q", "--", "echo again"),
        "ls": herd.popen("ls", "-q", "--all"),
        "wait": herd.popen("wait", str(done)),
        "log -f": herd.popen("log", "-f", str(done)),
    }
    calls["python"] = subprocess.Popen(
        [sys.executable, "-c", PYTHON_CLIENT, str(herd.home)],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for name, call in calls.items():  # each says once that it waits (after a moment)
            assert call.stderr is not None
            said = read_line(call.stderr.fileno(), bytearray(), 30 * load_stretch())
            assert said == waiting_line(restart.pid), name
        go.touch()  # the restart starts the next daemon
        outcomes = {name: ended(call) for name, call in calls.items()}
        restarted = ended(restart)
    finally:
        ended_all([*calls.values(), restart])
    assert restarted[0] == 0, restarted
    for name, outcome in outcomes.items():
        assert (outcome[0], outcome[2]) == (0, b""), (name, outcome)
    submitted = int(outcomes["submit"][1])
    python_job, state = outcomes["python"][1].decode().split()
    assert state == "succeeded"
    assert str(done) in outcomes["ls"][1].decode().split()
    assert outcomes["log -f"][1] == b"hi\n"
    herd.wait_state(submitted, "succeeded")
    jobs = sorted(job["id"] for job in herd.all_jobs())
    assert jobs == sorted([done, submitted, int(python_job)])  # each submitted once
    assert herd.cli("log", str(submitted)).stdout == "again\n"


def test_a_note_whose_restart_died_or_ended_without_a_daemon_is_not_waited_for(
    herd: Herd, tmp_path: Path
) -> None:
    stopped_with_a_job_done(herd)
    # A restart killed before it removed its note (kill -9): its pid gone.
    dead = subprocess.Popen(["true"])
    dead.wait()
    (herd.home / f"restarting.{dead.pid}").touch()
    none = herd.cli("ls", check=False)
    assert none.returncode == 3
    assert none.stderr.startswith(f"gpuherd: error: no gpuherd daemon is running for {herd.home}")
    assert len(none.stderr.splitlines()) == 1, none.stderr
    # One alive that ends without starting a daemon: the client waited, then says none runs.
    go = tmp_path / "go"
    restart = played_restart(herd, go, starts=False)
    try:
        ls = herd.popen("ls")
        assert ls.stderr is not None
        assert read_line(ls.stderr.fileno(), bytearray(), 30) == waiting_line(restart.pid)
        go.touch()
        code, out, err = ended(ls)
        assert ended(restart)[0] == 0
    finally:
        ended_all([ls, restart])
    assert (code, out) == (3, b"")
    assert err.decode().startswith(f"gpuherd: error: no gpuherd daemon is running for {herd.home}")


LOOP = """
import json, sys, time
from pathlib import Path
import gpuherd
from gpuherd import errors

herd, stop = gpuherd.connect(sys.argv[1], start=False), Path(sys.argv[2])
ids, failed, pids = [], [], []
print("looping", flush=True)
while not stop.exists():
    try:
        job = herd.submit("true", gpus=0)
        ids.append(job.id)
        job.wait()
        pids.append(herd.client.get("/daemon")["pid"])
    except errors.HerdError as exc:
        failed.append([type(exc).__name__, str(exc)])
    time.sleep(0.02)
print(json.dumps({"ids": ids, "failed": failed, "pids": sorted(set(pids))}), flush=True)
"""
"""A program that submits, waits and asks in a loop until the file `stop` exists."""

WAITS = """
while [ ! -e "$1" ]; do "$2" -m gpuherd wait -q "$3" || echo "failed: $?"; done
"""
"""`gpuherd wait` of a finished job, again and again until the file $1 exists."""


def more_submits(herd: Herd) -> None:
    """Until the loop (LOOP) has submitted 3 jobs more (to the daemon running now)."""
    seen = len(herd.all_jobs())
    wait_for(lambda: len(herd.all_jobs()) > seen + 2, 30, "the loop's next submits")


def test_clients_in_a_loop_go_on_through_real_restarts(daemon: Herd, tmp_path: Path) -> None:
    """Real `daemon restart`s, a running job re-attached, while a Python program submits and
    waits in a loop and a shell runs `gpuherd wait` in a loop: none fails for want of a
    daemon. A submit whose connection the old daemon cut after it was sent (it may have been
    taken) still says so, as before, and is not sent twice: every job acknowledged is queued
    once."""
    go = tmp_path / "go"
    running = daemon.running_until(go)
    done = daemon.submit("--", "true")
    daemon.wait_state(done, "succeeded")
    stop = tmp_path / "stop"
    loop = subprocess.Popen(
        [sys.executable, "-c", LOOP, str(daemon.home), str(stop)],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    waits = subprocess.Popen(
        ["sh", "-c", WAITS, "sh", str(stop), sys.executable, str(done)],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert loop.stdout is not None
        assert read_line(loop.stdout.fileno(), bytearray(), 30 * load_stretch()) == b"looping"
        pids = [daemon.pid]
        more_submits(daemon)
        for _ in range(2):
            daemon.cli("daemon", "restart")
            pids.append(daemon.pid)
            more_submits(daemon)
        stop.touch()
        looped, waited = ended(loop, 120), ended(waits, 120)
    finally:
        stop.touch()
        ended_all([loop, waits])
    assert (looped[0], waited[0]) == (0, 0), (looped, waited)
    out, said = looped[1], waited[1]
    assert said == b""  # no `gpuherd wait` failed
    found = json.loads(out.decode().splitlines()[-1])
    lost = [f for f in found["failed"] if f[0] != "LostConnection"]
    assert lost == [], found["failed"]
    assert found["pids"] == sorted(pids)  # it was answered by each daemon in turn
    queued = [job["id"] for job in daemon.all_jobs()]
    assert len(queued) == len(set(queued))
    assert set(found["ids"]) <= set(queued)
    go.touch()
    daemon.wait_state(running, "succeeded")
