"""`submit --wait` / `--follow`: wait for the job, exit with its own exit status (tsp -w/-f,
sbatch --wait, srun), through a restart of the daemon too; and submit's short options."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import psutil
from daemon_relay import relayed

from conftest import Herd, read_line, wait_for_long_poll


def waiting_submit(herd: Herd, *args: str) -> tuple[subprocess.Popen[str], int]:
    """`gpuherd submit --wait ARGS` left running, and the id its first line gave."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "submit", "--wait", *args],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = read_line(proc.stdout.fileno(), bytearray()).decode()
    assert first.startswith("submitted job "), first
    return proc, int(first.split()[-1])


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def blocked(go: Path, then: str = "") -> str:
    """A job command that waits until `go` exists, then runs `then`."""
    return f"while [ ! -e {go} ]; do sleep 0.05; done; {then}".rstrip("; ")


def submitted(stdout: str) -> int:
    """The id in a `submitted job N` first line (the module's daemon numbers on across tests)."""
    said = re.match(r"submitted job ([1-9][0-9]*)\n", stdout)
    assert said, stdout
    return int(said[1])


def test_success_exits_0_and_says_nothing_more(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    done = daemon.cli("submit", "--wait", "--", "echo", "hi")
    job_id = submitted(done.stdout)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"submitted job {job_id}\n", "")
    assert daemon.job(job_id)["state"] == "succeeded"
    assert daemon.job(job_id)["command"] == "echo hi"


def test_exit_code_is_the_jobs(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    done = daemon.cli("submit", "--wait", "exit 3", check=False)
    job_id = submitted(done.stdout)
    assert (done.returncode, done.stdout, done.stderr) == (
        3,
        f"submitted job {job_id}\n",
        f"job {job_id}: failed (exit 3)\n",
    )
    assert daemon.job(job_id)["command"] == "exit 3"


def test_a_signal_gives_128_plus_its_number(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    done = daemon.cli("submit", "--wait", "kill -9 $$", check=False)
    job_id = submitted(done.stdout)
    assert done.returncode == 128 + 9
    assert done.stderr == f"job {job_id}: failed (signal 9, SIGKILL)\n"
    job = daemon.job(job_id)
    assert (job["outcome"], job["signal"]) == ("signal", 9)


def test_killed_by_gpuherd_exits_1_and_says_so(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    proc, job_id = waiting_submit(daemon, blocked(tmp_path / "never"))
    daemon.wait_state(job_id, "running")
    daemon.cli("kill", str(job_id))
    code, out, err = finish(proc)
    assert (code, out, err) == (1, "", f"job {job_id}: killed\n")


def test_a_cancelled_job_exits_1(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    proc, job_id = waiting_submit(daemon, "--hold", "true")
    daemon.wait_state(job_id, "held")
    daemon.cli("kill", str(job_id))
    code, _, err = finish(proc)
    held = f"gpuherd: job {job_id} is held: waiting until it is released"  # (--hold's note)
    assert (code, err) == (
        1,
        f"{held} (gpuherd release {job_id} lets it run)\njob {job_id}: cancelled by the user\n",
    )


def test_file_exits_with_the_first_failed_jobs_code(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    one_fails = daemon.cli("submit", "-w", "--file", "-", input="true\nexit 4\ntrue\n", check=False)
    assert one_fails.returncode == 4
    first = int(one_fails.stdout.split()[-1].split("-")[0])
    assert one_fails.stdout == f"submitted 3 jobs: {first}-{first + 2}\n"
    assert one_fails.stderr == f"job {first + 1}: failed (exit 4)\n"
    ids = (first, first + 1, first + 2)
    assert [daemon.job(i)["command"] for i in ids] == ["true", "exit 4", "true"]
    assert [daemon.job(i)["state"] for i in ids] == ["succeeded", "failed", "succeeded"]

    # The first in submission order counts, not the first to end; every failure is named.
    lines = "sleep 0.5; exit 6\nexit 5\nexit 5\n"
    several = daemon.cli("submit", "-w", "--file", "-", input=lines, check=False)
    assert several.returncode == 6
    assert several.stdout == f"submitted 3 jobs: {first + 3}-{first + 5}\n"
    assert several.stderr == (
        f"job {first + 3}: failed (exit 6)\njobs {first + 4}-{first + 5}: failed (exit 5)\n"
    )

    all_good = daemon.cli("submit", "-w", "--file", "-", input="true\ntrue\n")
    assert (all_good.returncode, all_good.stderr) == (0, "")


def test_how_jobs_ended_comes_with_the_waits_answer(shared_daemon: Herd, tmp_path: Path) -> None:
    """The failures named are those the wait's answer tells (`endings`): no request per job
    that did not succeed (before: one `/jobs/ID` each, a thousand for a --file of a thousand
    failures). A daemon from before `endings` (and `POST /jobs/wait`: its GET is asked) is
    asked job by job, with the same words."""
    lines = "exit 4\ntrue\nkill -9 $$\n"
    for older in (False, True):
        with relayed(shared_daemon, tmp_path, older) as (env, requests):
            done = shared_daemon.cli(
                "submit", "-w", "--file", "-", input=lines, env=env, check=False
            )
        first = int(done.stdout.split()[-1].split("-")[0])
        assert (done.returncode, done.stderr) == (
            4,
            f"job {first}: failed (exit 4)\njob {first + 2}: failed (signal 9, SIGKILL)\n",
        )
        asked = [" ".join(line.split()[:2]) for line in requests if "/api/v1/jobs/" in line]
        # (before the wait: a look at each job's reason, for the note of one that cannot end
        # by itself, cli/stuck_notes.py)
        looked = [f"GET /api/v1/jobs/{job}" for job in range(first, first + 3)]
        assert asked[:3] == looked
        assert [path.split("?")[0] for path in asked[3:]] == ["POST /api/v1/jobs/wait"] + (
            [
                "GET /api/v1/jobs/wait",
                f"GET /api/v1/jobs/{first}",
                f"GET /api/v1/jobs/{first + 2}",
            ]
            if older
            else []
        )


def test_quiet_prints_nothing_the_exit_status_tells(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    good = daemon.cli("submit", "-q", "-w", "--", "echo", "hi")
    assert (good.returncode, good.stdout, good.stderr) == (0, "", "")
    bad = daemon.cli("submit", "-q", "-w", "exit 2", check=False)
    assert (bad.returncode, bad.stdout) == (2, "")
    said = re.fullmatch(r"job ([1-9][0-9]*): failed \(exit 2\)\n", bad.stderr)
    assert said, bad.stderr  # a failure is still named, on stderr
    bad_id = int(said[1])
    # The id named is the failed job's, and the one submitted just before it is `good`'s.
    assert (daemon.job(bad_id)["command"], daemon.job(bad_id)["state"]) == ("exit 2", "failed")
    assert daemon.job(bad_id - 1)["command"] == "echo hi"
    # Without --wait, -q prints the ids as before.
    assert daemon.cli("submit", "-q", "true").stdout == f"{bad_id + 1}\n"


def test_follow_prints_the_jobs_stdout_then_exits_with_its_code(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    done = daemon.cli(
        "submit", "--follow", "echo one; echo oops >&2; echo two; exit 7", check=False
    )
    assert done.returncode == 7
    # stdout is the job's output alone (`| head -1`, `> out.txt`); gpuherd's own lines go to
    # stderr (before: `submitted job N` came first on stdout).
    assert done.stdout == "one\ntwo\n"
    job_id = submitted(done.stderr)
    # Its stderr (the traceback, usually) is not printed: where it is, is said.
    assert done.stderr == (
        f"submitted job {job_id}\n"
        f"job {job_id}: failed (exit 7); its stderr: gpuherd log {job_id} --stderr\n"
    )
    as_json = daemon.cli("submit", "--json", "--follow", "--", "echo", "out")
    assert as_json.stdout == "out\n"
    assert json.loads(as_json.stderr) == {
        "ids": [job_id + 1], "cancelled": [], "draining": False, "warnings": []
    }  # fmt: skip
    quiet = daemon.cli("submit", "-q", "--follow", "--", "echo", "only this")
    assert (quiet.returncode, quiet.stdout) == (0, "only this\n")

    before = [job["id"] for job in daemon.ls_all()]
    assert max(before) == job_id + 2  # the three jobs above are the last ones
    several = daemon.cli("submit", "--follow", "--file", "-", input="true\ntrue\n", check=False)
    assert several.returncode == 2
    assert "--follow prints one job's output" in several.stderr
    # refused before anything was submitted
    assert [job["id"] for job in daemon.ls_all()] == before


def test_a_reader_that_goes_away_ends_the_printing_not_the_wait(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`submit --follow ... | head -1` exited 0 when the job printed its next line, before
    the job had ended: a success nobody knew. It waits on, silent, as --wait does. The line
    `head -1` gets is the job's first, not gpuherd's `submitted job N` (on stderr)."""
    daemon = shared_daemon
    go = tmp_path / "go"
    command = f"echo first; {blocked(go, 'echo more; exit 3')}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "submit", "--follow", command],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        errors = bytearray()
        job_id = submitted(read_line(proc.stderr.fileno(), errors).decode() + "\n")
        assert read_line(proc.stdout.fileno(), bytearray()) == b"first"
        proc.stdout.close()  # `head -1` has its line
        daemon.wait_state(job_id, "running")
        go.touch()  # its next line finds no reader
        daemon.wait_state(job_id, "failed")
        assert proc.wait(timeout=30) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert errors + proc.stderr.buffer.read() == f"job {job_id}: failed (exit 3)\n".encode()
    proc.stderr.close()

    # Gone before the first line (`| true`): --wait too exits with the job's status.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gpuherd", "submit", "--wait", "exit 4"],
            env=daemon.env,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (4, f"job {job_id + 1}: failed (exit 4)\n")


def test_short_options(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    first = daemon.submit("--", "true")
    done = daemon.cli(
        "submit", "-n", "short", "-g", "2", "-p", "5", "-a", str(first), "-w", "--", "true"
    )
    assert done.returncode == 0
    job = daemon.job(first + 1)
    assert (job["name"], job["gpus_requested"], job["priority"], job["after"]) == (
        "short",
        2,
        5,
        [first],
    )
    assert (job["state"], len(job["gpus"])) == ("succeeded", 2)
    help_text = daemon.cli("submit", "--help").stdout
    for short, long in [("-n", "--name"), ("-g", "--gpus"), ("-p", "--priority")]:
        assert f"{short}, {long}" in help_text
    assert "-a, --after" in help_text and "-w, --wait" in help_text


def test_the_wait_goes_on_through_a_crash_of_the_daemon(daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    proc, job_id = waiting_submit(daemon, blocked(go, "exit 3"))
    try:
        daemon.wait_state(job_id, "running")
        # Its long poll is open: it holds a connection to the daemon's socket.
        waiter = psutil.Process(proc.pid)
        wait_for_long_poll(waiter)
        daemon.kill9()
        daemon.start()
        assert proc.poll() is None  # still waiting, for the job
        go.touch()
    finally:
        code, out, err = finish(proc)
    assert code == 3, err
    assert out == ""
    assert "gpuherd: the daemon went away; waiting for it to come back\n" in err
    assert err.endswith(f"job {job_id}: failed (exit 3)\n")


def test_follow_goes_on_through_a_restart_of_the_daemon(daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    command = f"echo before; {blocked(go, 'echo after')}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "submit", "--follow", command],
        env=daemon.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert read_line(proc.stderr.fileno(), bytearray()) == b"submitted job 1"
        buffer = bytearray()
        assert read_line(proc.stdout.fileno(), buffer) == b"before"
        assert not buffer
        daemon.cli("daemon", "stop")  # an upgrade's restart: the job goes on
        daemon.start()
        go.touch()
    finally:
        code, out, err = finish(proc)
    assert code == 0, err
    assert out == "after\n"  # what was read before the restart is not printed again
    assert "the daemon went away" in err
