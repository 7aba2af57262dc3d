"""The notes the CLI writes on stderr besides its errors (a held job's `log -f`, `wait`'s held
jobs, the daemon gone, a retry begun, a silent stdout, an older daemon) start with the name
typed, as its error lines do: `herd: job 1 has not started yet: ...` under `herd`."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from test_cli_errors import ENTRY_POINTS, run, shared

from conftest import Herd, read_line, retried_after
from gpuherd import __version__

__all__ = ["shared"]  # the module's daemon (job 1 held, job 2 succeeded), by name

NAMES = pytest.mark.parametrize(("entry", "name"), [("herd", "herd"), ("gpuherd", "gpuherd")])


def started(herd: Herd, entry: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*ENTRY_POINTS[entry], *args],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def stderr_line(proc: subprocess.Popen[bytes], buffer: bytearray) -> str:
    assert proc.stderr is not None
    return read_line(proc.stderr.fileno(), buffer).decode()


@NAMES
def test_the_notes_on_held_jobs_and_a_silent_stdout_say_the_name_typed(
    shared: Herd, entry: str, name: str
) -> None:
    # They said `gpuherd: job 1 ...` whatever the name typed; then `herd: job 1 ...: gpuherd
    # wait 1 waits for it`, the command quoted still `gpuherd`.
    waited = run(shared, entry, "wait")
    assert waited.returncode == 0, waited.stderr
    assert waited.stderr == (
        f"{name}: job 1 is held (until released, or its --begin time), not waited for: "
        f"{name} wait 1 waits for it\n"
    )
    follow = started(shared, entry, "log", "-f", "1")
    try:  # it waits for the job to start: its note comes first
        note = stderr_line(follow, bytearray())
    finally:
        follow.kill()
        follow.communicate()
    assert note == (
        f"{name}: job 1 has not started yet: held; its log follows once it starts "
        f"({name} release 1 lets it run)"
    )
    quiet = shared.submit("--", "sh", "-c", "echo warned >&2")
    shared.wait_state(quiet, "succeeded")
    logged = run(shared, entry, "log", str(quiet))
    assert (logged.returncode, logged.stdout) == (0, "")
    assert logged.stderr == (
        f"{name}: job {quiet} wrote nothing to stdout, but to stderr: {name} log {quiet} --stderr\n"
    )


@NAMES
def test_the_commands_the_clis_hints_quote_say_the_name_typed(
    shared: Herd, entry: str, name: str
) -> None:
    # They said `gpuherd log 2`, `gpuherd retry 3-7`, ... whatever the name typed.
    attempt = run(shared, entry, "log", "--attempt", "0", "2")
    assert attempt.returncode == 2
    assert attempt.stderr == (
        f"{name}: error: --attempt 0: attempts are numbered from 1; job 2's latest is 1 (what "
        f"`{name} log 2` shows) (see {name} log --help)\n"
    )
    retried = run(shared, entry, "retry")
    assert (retried.returncode, retried.stdout) == (
        0,
        f"no job ids given: nothing to retry (e.g. {name} retry 3-7)\n",
    )
    sweep = run(shared, entry, "sweep", "status", "no/such")
    assert (sweep.returncode, sweep.stderr) == (
        1,
        f"{name}: error: no sweep named 'no/such': `{name} sweep ls` lists the sweeps\n",
    )
    again = run(shared, entry, "daemon", "start", "--fake-gpus", "4")
    assert again.returncode == 1
    assert again.stderr.endswith(f"`{name} daemon stop` stops it\n")


def test_a_follow_through_a_crash_and_a_retry_says_the_name_typed(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = retried_after(daemon, go)
    follow = started(daemon, "herd", "log", "-f", str(job_id))
    err = bytearray()
    try:
        assert follow.stdout is not None
        assert read_line(follow.stdout.fileno(), bytearray()) == b"start 1"
        daemon.kill9()  # the job goes on; the follow waits for the next daemon
        assert stderr_line(follow, err) == (
            "herd: the daemon went away; waiting for it to come back"
        )
        daemon.start("--fake-gpus", "4")
        go.touch()  # attempt 1 fails; attempt 2 succeeds
        assert stderr_line(follow, err) == f"herd: job {job_id}: attempt 2 began"
        out, rest = follow.communicate(timeout=30)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.communicate()
    assert (follow.returncode, out, err + rest) == (0, b"start 2\n", b"")
    assert daemon.job(job_id)["state"] == "succeeded"


@NAMES
def test_an_older_daemons_warning_says_the_name_typed(
    tmp_path: Path, entry: str, name: str
) -> None:
    # Said `gpuherd: warning:` whatever the name typed. A daemon of version 0.0.1 that
    # answers one request: no job 5.
    path = tmp_path / "old.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(15)

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request and (chunk := conn.recv(65536)):
                request += chunk
            body = b'{"error": "no job 5"}'
            conn.sendall(
                b"HTTP/1.1 404 Not Found\r\ngpuherd-version: 0.0.1\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    env = {**os.environ, "GPUHERD_HOME": str(tmp_path / "home"), "GPUHERD_SOCKET": str(path)}
    try:
        shown = subprocess.run(
            [*ENTRY_POINTS[entry], "show", "5"], env=env, capture_output=True, text=True, timeout=60
        )
    finally:
        thread.join(15)
        listener.close()
    assert shown.returncode == 1
    assert shown.stderr.splitlines() == [
        f"{name}: warning: the daemon runs gpuherd 0.0.1 and this is {__version__}: restart it "
        "to run this version (`gpuherd daemon restart`: running jobs go on)",
        f"{name}: error: no job 5",
    ]
