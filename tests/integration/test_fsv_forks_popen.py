"""tests/forks_popen.py: a `python -m MODULE ARGS` left running that the fork server forks
behaves, to the test that holds it and to the child, as the subprocess.Popen it stands for."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

import forks
import forks_popen
from integration.test_fsv_forks import PROBE

PIPES: dict[str, Any] = dict.fromkeys(("stdin", "stdout", "stderr"), subprocess.PIPE)


@pytest.fixture(name="probe_dir")
def probe_dir_fixture(tmp_path: Path) -> Path:
    (tmp_path / "fsvprobe.py").write_text(PROBE)
    return tmp_path


@contextlib.contextmanager
def ended(*started: subprocess.Popen[bytes]) -> Iterator[None]:
    """Each of `started` ended and its pipes closed on the way out, also when a check failed
    (or its handle, collected later, would warn in whichever test runs then)."""
    try:
        yield
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()


def start(folder: Path, how: str, **options: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FSV_VALUE": "one two"}
    started = forks_popen.popen("fsvprobe", [how], env=env, cwd=folder, **options)
    assert isinstance(started, forks_popen.ForkedPopen)
    return started


def test_a_forked_popen_gives_what_popen_gives(probe_dir: Path) -> None:
    forked = start(probe_dir, "stdin", start_new_session=True, **PIPES)
    real = subprocess.Popen(
        [sys.executable, "-m", "fsvprobe", "stdin"],
        env={**os.environ, "FSV_VALUE": "one two"},
        cwd=probe_dir,
        start_new_session=True,
        **PIPES,
    )
    with ended(forked, real):
        mine = [child.pid for child in psutil.Process().children()]
        assert real.pid in mine and forked.pid not in mine  # the server's child
        given = b"line one\nline two\n"
        out, err = forked.communicate(given, 30)
        real_out, real_err = real.communicate(given, 30)
    assert (forked.returncode, err) == (real.returncode, real_err) == (0, b"atexit ran\n")
    seen, fresh = json.loads(out), json.loads(real_out)
    assert seen["stdin"] == "line one\nline two\n"
    assert seen["sid"] == seen["pgid"] == forked.pid  # a session of its own, as asked
    assert fresh["sid"] == fresh["pgid"] == real.pid
    assert sorted(seen["fds"]) == ["0", "1", "2"], seen["fds"]
    assert seen.pop("preloaded") and not fresh.pop("preloaded")
    for different in ("sid", "pgid", "caches"):
        del seen[different], fresh[different]
    assert seen == fresh


def test_poll_wait_and_signals_reach_the_child_and_its_end_comes_back(probe_dir: Path) -> None:
    child = start(probe_dir, "sleep", stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert child.stdout is not None
    with ended(child):
        assert json.loads(child.stdout.readline())["pgid"] == os.getpgid(0)  # (no new session)
        assert child.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.2)
        assert psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == -signal.SIGTERM
    assert child.poll() == -signal.SIGTERM
    child.kill()  # (ended: nothing is sent, as Popen sends nothing)
    server = forks.server()
    assert server is not None
    assert child.pid not in [c.pid for c in psutil.Process(server.pid).children()]  # reaped


def test_an_exit_status_and_unredirected_streams(probe_dir: Path) -> None:
    """A stream not redirected is this process's own, as with Popen."""
    child = start(probe_dir, "exit:3", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    with ended(child):
        out, err = child.communicate(timeout=30)
    assert child.returncode == 3 and err is None
    stderr = json.loads(out)["fds"]["2"]
    assert stderr == os.readlink("/proc/self/fd/2").split("[")[0]


def test_it_holds_none_of_the_servers_fds_once_started(probe_dir: Path) -> None:
    """As Popen returns once its child has exec'd: the server waits for its child to have
    closed the server's fds before it gives the pid. Before, a test saw the server's unix
    sockets in the child (psutil, right after the start: 182 of 200 starts) and took them
    for the connection of the command's first request."""
    for _ in range(20):
        child = start(probe_dir, "sleep", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        with ended(child):
            assert psutil.Process(child.pid).net_connections(kind="unix") == []
