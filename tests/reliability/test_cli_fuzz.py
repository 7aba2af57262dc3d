"""Property tests of the CLI: random argument lists for the everyday verbs give a clean error
line or a valid result, never a traceback.

The CLI runs in this process (gpuherd.cli.main.main, output captured), against a daemon whose
queue is paused, so nothing a random `submit` queues ever runs; `run` reads an empty stdin.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults import record, run_cli, scaled
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import Herd, wait_for
from gpuherd import __version__
from gpuherd.errors import HerdError

VERBS = ["submit", "ls", "show", "kill", "priority", "move", "gpus", "config", "run"]
WORDS = [
    # options of those verbs
    "--gpus", "--priority", "--name", "--after", "--retries", "--timeout", "--grace", "--hold",
    "--project", "--cwd", "--env", "--mem", "--ram", "--oom-retry", "-q", "--json", "--all",
    "--state", "--limit", "--first", "--before", "--file", "--slots", "--fake-gpus",
    "--output-dir", "--max-parallel", "--gpus-per-job", "--retries", "--keep-state", "--prefix",
    "--stderr", "--help", "-h", "--", "-",
    # sub-commands and settings
    "add", "remove", "drain", "enable", "set", "get", "keep-free", "foreign", "slots",
    # values, good and bad
    "0", "1", "2", "3", "64", "65", "-1", "3-7", "3-1", "1,2", "1-", ",", "a,b", "999",
    "9223372036854775808", "1e9", "0.5", "-0", "nan", "inf", "10GiB", "10XB", "90s", "2h",
    "1h30m", "2x", "SEED=1", "=x", "NOEQUALS", "queued", "running", "held", "nosuch",
    "/nonexistent", "true", "echo hi", "sh -c 'exit 3'", "10%", "auto", "ignore", "",
    " ", "é", "\t", "'", '"', "$(touch pwned)", "; rm -rf ~",
]  # fmt: skip


def safe_text(text: str) -> bool:
    """Random words, but no path that names an existing place (run writes where it is told)."""
    return not text.startswith(("/", "~", ".")) and "\0" not in text


TOKENS = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(WORDS),
    st.text(max_size=8).filter(safe_text),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)
ARGV = st.tuples(st.sampled_from(VERBS), st.lists(TOKENS, max_size=7)).map(lambda t: [t[0], *t[1]])


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    herd = Herd(tmp_path_factory.mktemp("cli-fuzz") / "home")
    try:
        herd.start("--fake-gpus", "2")
        herd.cli("pause")
        herd.submit("--hold", "--", "true")  # job 1, held
        herd.submit("--", "true")  # job 2, queued
        yield herd
    finally:
        for job in herd.ls_all() if herd.is_up() else []:
            if job["state"] in ("queued", "held"):
                herd.client.post("/jobs/kill", {"ids": [job["id"]]})
        herd.cleanup()


def test_random_arguments_give_a_clean_error_or_a_result(
    paused: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUHERD_HOME", str(paused.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("GPUHERD_SOCKET", raising=False)
    monkeypatch.chdir(tmp_path)  # an empty folder: `run` and `--file` find nothing by chance
    seen = {"ok": 0, "error": 0}

    @settings(
        max_examples=scaled(150, 1000),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(argv=ARGV)
    def check(argv: list[str]) -> None:
        result = run_cli(argv)
        assert "Traceback" not in result.err + result.out, (argv, result.err)
        if result.code == 0:
            seen["ok"] += 1
            return
        seen["error"] += 1
        err = result.err
        for token in argv:  # an argument with a line break, echoed in the message, may break it
            if token and ("\n" in token or "\r" in token):
                err = err.replace(token, "<arg>")
        lines = err.split("\n")[:-1]  # not splitlines(): \x1e is no line break on a terminal
        assert lines, (argv, result.code, "an error with no message")
        assert any(line.startswith("gpuherd: error: ") for line in lines), (argv, result.err)
        assert all(line.startswith("gpuherd: ") for line in lines), (argv, result.err)

    check()
    assert paused.is_up() and paused.client.get("/daemon")["queue_paused"] is True
    assert not [j for j in paused.ls_all() if j["pid"]]  # nothing queued by it has run
    assert all(p.name == "herd_runs" for p in tmp_path.iterdir())  # `run` wrote only there
    record("cli_fuzz", cases=sum(seen.values()), succeeded=seen["ok"], refused=seen["error"])


# ---- found while fuzzing: a NUL byte in a job ----------------------------------------------------


@pytest.mark.parametrize("where", ["command", "environment"])
def test_a_nul_byte_in_a_job_never_wedges_the_queue(daemon: Herd, where: str) -> None:
    """The command through `submit --file` (a damaged job file); an environment value through
    the API (no real environment can hold a NUL byte)."""
    if where == "command":
        text = "echo a\0b\necho next\n"
        proc = daemon.cli("submit", "-q", "--file", "-", input=text, check=False)
        refusal = proc.stderr if proc.returncode else None
        ids = [int(w) for w in proc.stdout.split()]
    else:
        cwd = str(daemon.home.parent)
        items = [
            {"command": "echo a", "cwd": cwd, "env": {"BAD": "a\0b"}},
            {"command": "echo next", "cwd": cwd, "env": {}},
        ]
        try:
            ids, refusal = daemon.client.post("/jobs", {"jobs": items})["ids"], None
        except HerdError as exc:
            ids, refusal = [], str(exc)
    if refusal is not None:  # refused at the door: fine, if it says why and stores nothing
        assert "NUL" in refusal or "null" in refusal, refusal
        assert daemon.ls_all() == []
        return
    first, second = ids
    job = daemon.wait_state(first, "succeeded", "failed", "lost", timeout=5)
    assert (job["state"], job["outcome"]) == ("failed", "spawn_error"), job
    after = daemon.wait_state(second, "succeeded", "failed", "lost", timeout=5)
    assert after["state"] == "succeeded"


def test_a_command_over_128_kib_is_refused_with_the_reason(daemon: Herd) -> None:
    # It was queued, then failed as spawn_error "Argument list too long; check that this
    # folder exists, is writable and its disk is not full".
    fits = "echo " + "y" * (128 * 1024 - 1 - 5)
    proc = daemon.cli("submit", "-q", "--file", "-", input=fits + "y\n", check=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "gpuherd: error: standard input: line 1 is longer than 128 KiB, more than a command "
        "can be: put it in a script file and run that\n"
    )
    assert daemon.ls_all() == []
    (longest,) = daemon.submit_lines([fits])  # the limit itself still runs
    assert daemon.wait_state(longest, "succeeded", "failed")["state"] == "succeeded"
    assert len(daemon.cli("log", str(longest)).stdout) == len(fits) - 5 + 1


# ---- found by the durability test: a daemon that dies while it answers ---------------------------


def read_request(conn: socket.socket) -> None:
    """All of one HTTP request: its headers and the body their Content-Length announces."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def half_answering_daemon(path: Path, stop: threading.Event) -> None:
    """Answers every request with headers that promise a body, then hangs up (a kill -9).
    The headers name this gpuherd's version, as the daemon's do: one that names none is
    an older daemon, which the client warns of."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(8)
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn, contextlib.suppress(OSError):  # the client may hang up first
                conn.settimeout(5)
                read_request(conn)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"gpuherd-version: " + __version__.encode() + b"\r\n"
                    b"Content-Length: 34\r\n\r\n"
                )


@pytest.mark.parametrize("argv", [["ls"], ["submit", "--", "true"], ["show", "1"]])
def test_a_daemon_dying_mid_answer_gives_one_error_line(tmp_path: Path, argv: list[str]) -> None:
    path = tmp_path / "run" / "herd.sock"
    path.parent.mkdir(mode=0o700)
    stop = threading.Event()
    server = threading.Thread(target=half_answering_daemon, args=(path, stop))
    server.start()
    try:
        wait_for(path.exists, what="the fake daemon's socket")
        env = {**os.environ, "GPUHERD_HOME": str(tmp_path / "home"), "GPUHERD_SOCKET": str(path)}
        proc = subprocess.run(
            [sys.executable, "-m", "gpuherd", *argv],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        stop.set()
        server.join(timeout=10)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: "), proc.stderr
