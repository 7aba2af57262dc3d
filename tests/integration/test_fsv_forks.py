"""The tests' fork server (tests/forks.py): a child it forks for `python -m MODULE ARGS` looks,
to the code it runs, as a process subprocess.run starts; and a call that it could not make
look so runs as a real process."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

import forks
from conftest import Herd, gone, wait_for

ARGV = [sys.executable, "-m", "fsvprobe", "none"]
PROBE = r'''
"""What a process sees of its start, as JSON on stdout; then it ends as argv[1] says."""
import atexit, io, json, os, signal, subprocess, sys, tempfile, threading, time

def stdio(stream):
    raw = stream.buffer if isinstance(stream.buffer, io.RawIOBase) else stream.buffer.raw
    return [stream.encoding, stream.errors, stream.line_buffering, stream.write_through,
            raw.name, stream.mode, stream.fileno(), type(stream.buffer).__name__]

def fds():
    """The open fds, with what each is (but the listing's own)."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}").split("[")[0]
        except OSError:
            pass
    return found

def handler(number):
    h = signal.getsignal(number)
    return h if isinstance(h, int) or h is None else h.__name__

how = sys.argv[1]
mask = os.umask(0); os.umask(mask)
seen = {
    "argv": sys.argv, "orig_argv": sys.orig_argv[1:], "path0": sys.path[0], "cwd": os.getcwd(),
    "env": {k: v for k, v in os.environ.items() if k.startswith("FSV_")},
    "c_env": subprocess.run("echo $FSV_VALUE", shell=True, capture_output=True).stdout.decode(),
    "stdin": sys.stdin.read() if how == "stdin" else None,
    "stdio": [stdio(s) for s in (sys.stdin, sys.stdout, sys.stderr)],
    "dunder": [s is d for s, d in ((sys.stdin, sys.__stdin__), (sys.stdout, sys.__stdout__))],
    "signals": {n: handler(n) for n in range(1, signal.NSIG)
                if n not in (signal.SIGKILL, signal.SIGSTOP) and n < signal.SIGRTMIN},
    "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    "fds": fds(),
    "umask": mask, "pgid": os.getpgid(0), "sid": os.getsid(0), "tempdir": tempfile.tempdir,
    "main": sorted(k for k in vars(sys.modules["__main__"]) if k.startswith("__")),
    "name": __name__, "threads": threading.active_count(),
    "preloaded": "gpuherd.daemon" in sys.modules,
    "caches": [f"{m}.{a}" for m, module in list(sys.modules.items()) if m.startswith("gpuherd")
               for a, v in vars(module).items() if getattr(v, "cache_info", None)
               and v.cache_info().currsize],
}
print(json.dumps(seen), flush=True)
atexit.register(lambda: print("atexit ran", file=sys.stderr))
if how == "thread":  # a thread still running at the end: joined before the exit handlers
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread done", flush=True))).start()
elif how == "sleep":
    time.sleep(60)
elif how == "raise":
    raise ValueError("probe failed")
elif how == "interrupt":
    raise KeyboardInterrupt
elif how.startswith("exit:"):
    code = how[5:]
    sys.exit(None if code == "None" else int(code) if code.lstrip("-").isdigit() else code)
'''


@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    (tmp_path / "fsvprobe.py").write_text(PROBE)
    return tmp_path


def both(folder: Path, how: str, **options: Any) -> tuple[Any, Any]:
    """The probe run as a real process and forked, with the same request."""
    env = {**os.environ, "FSV_VALUE": "one two", **options.pop("env", {})}
    request = {"env": env, "cwd": folder, "timeout": 60, **options}
    real = subprocess.run(
        [sys.executable, "-m", "fsvprobe", how], capture_output=True, text=True, **request
    )
    forked = forks.python_m("fsvprobe", [how], **request)
    assert forks.server() is not None
    assert psutil.Process().children() == []  # the server is not this process's child
    return real, forked


def test_a_forked_child_sees_what_a_new_process_sees(probe_dir: Path) -> None:
    real, forked = both(probe_dir, "stdin", input="line one\nline two\n")
    assert (
        (forked.returncode, forked.stderr) == (real.returncode, real.stderr) == (0, "atexit ran\n")
    )
    seen, fresh = json.loads(forked.stdout), json.loads(real.stdout)
    assert seen["argv"][0] == str(probe_dir / "fsvprobe.py")
    assert seen["env"] == {"FSV_VALUE": "one two"} and seen["c_env"] == "one two\n"
    assert seen["stdin"] == "line one\nline two\n"
    assert sorted(seen["fds"]) == ["0", "1", "2"], seen["fds"]
    # The server imported, and called nothing but the API routes' analysis (forks_server.py),
    # which depends on nothing of the process's.
    assert seen.pop("caches") == ["gpuherd.api.app.api_routes"] and fresh.pop("caches") == []
    assert seen.pop("preloaded") and not fresh.pop("preloaded")
    assert seen == fresh


def test_signals_at_their_defaults_even_if_the_caller_ignores_some(probe_dir: Path) -> None:
    """Whatever the test's process blocks: a real process would inherit a blocked signal (the
    conftest unblocks SIGINT, SIGHUP and SIGTERM before each test for that reason)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        real, forked = both(probe_dir, "none")
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    seen = json.loads(forked.stdout)
    assert seen["signals"][str(int(signal.SIGPIPE))] == int(signal.SIG_IGN)
    assert seen["signals"][str(int(signal.SIGINT))] == "default_int_handler"
    assert seen["signals"][str(int(signal.SIGTERM))] == int(signal.SIG_DFL)
    assert seen["blocked"] == []
    assert json.loads(real.stdout)["signals"] == seen["signals"]


@pytest.mark.parametrize("how", ["exit:None", "exit:0", "exit:3", "exit:-1", "exit:say this"])
def test_exit_statuses_as_python_makes_them(probe_dir: Path, how: str) -> None:
    real, forked = both(probe_dir, how)
    assert (forked.returncode, forked.stderr) == (real.returncode, real.stderr)


def test_a_traceback_and_an_interrupt_end_it_as_python_does(probe_dir: Path) -> None:
    real, forked = both(probe_dir, "raise")
    assert forked.returncode == real.returncode == 1
    assert forked.stderr.splitlines()[-2:] == real.stderr.splitlines()[-2:]
    assert forked.stderr.splitlines()[-2] == "ValueError: probe failed"
    real, forked = both(probe_dir, "interrupt")
    assert forked.returncode == real.returncode == -signal.SIGINT
    assert forked.stderr.splitlines()[-2:] == real.stderr.splitlines()[-2:]


def test_threads_are_joined_before_the_exit_handlers(probe_dir: Path) -> None:
    real, forked = both(probe_dir, "thread")
    assert forked.stdout.splitlines()[1:] == ["thread done"]
    assert (
        (forked.stderr, forked.returncode) == (real.stderr, real.returncode) == ("atexit ran\n", 0)
    )


def test_a_timeout_kills_the_child(probe_dir: Path) -> None:
    forks.python_m("fsvprobe", ["none"], env=dict(os.environ), cwd=probe_dir)  # the server up
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        forks.python_m("fsvprobe", ["sleep"], env=dict(os.environ), cwd=probe_dir, timeout=2)
    assert isinstance(raised.value.output, bytes)
    assert json.loads(raised.value.output)["pgid"] == os.getpgid(0)  # (it had started)
    server = forks.server()
    assert server is not None
    assert psutil.Process(server.pid).children() == [], "the child is still running"


@pytest.mark.parametrize(
    "variable",
    ["GPUHERD_TEST_KEEP_ALIVE", "PYTHONPATH", "LANG", "LC_ALL", "GPUHERD_TEST_NO_FORK"],
)
def test_a_call_the_server_cannot_make_alike_runs_as_a_real_process(
    probe_dir: Path, variable: str
) -> None:
    env = {**os.environ, variable: "1"}
    assert json.loads(
        forks.python_m("fsvprobe", ["none"], env=dict(os.environ), cwd=probe_dir).stdout
    )["preloaded"]
    server = forks.server()
    assert server is not None
    assert server.fallback_reason(ARGV, dict(os.environ), probe_dir) is None
    assert server.fallback_reason(ARGV, env, probe_dir) is not None
    ran = forks.python_m("fsvprobe", ["none"], env=env, cwd=probe_dir)
    assert not json.loads(ran.stdout)["preloaded"]  # a real process: nothing imported before


def test_the_variables_read_at_import_are_known() -> None:
    """Every environment variable a gpuherd module reads at its top level is in IMPORTED_ENV:
    a forked child has the server's value of those. And no other: a call setting one would be
    a real process for nothing (each such call costs ~5 times a forked one's CPU)."""
    src = Path(__file__).resolve().parents[2] / "src" / "gpuherd"
    read = set()
    for path in src.rglob("*.py"):
        for statement in ast.parse(path.read_text()).body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue  # (read when called)
            for node in ast.walk(statement):
                asked = node.args[:1] if isinstance(node, ast.Call) else []
                if isinstance(node, ast.Subscript):
                    asked = [node.slice]
                text = ast.unparse(node.func if isinstance(node, ast.Call) else node)
                if asked and ("environ" in text or "getenv" in text):
                    assert isinstance(asked[0], ast.Constant), f"{path}: {ast.unparse(node)}"
                    read.add(asked[0].value)
    assert read and read == set(forks.IMPORTED_ENV), read ^ set(forks.IMPORTED_ENV)


def test_the_cli_through_the_server_is_the_cli(herd: Herd) -> None:
    refused = herd.cli("ls", check=False)
    assert refused.returncode == 3 and refused.stderr.startswith("gpuherd: error: no gpuherd")
    herd.start("--fake-gpus", "1")
    job = herd.submit("echo hello")
    herd.wait_state(job, "succeeded")
    assert herd.cli("log", str(job)).stdout == "hello\n"
    assert forks.server() is not None


def test_a_daemon_start_forks_the_daemon_as_popen_would_start_it(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    daemon = psutil.Process(herd.pid)
    words = daemon.cmdline()
    assert words[:7] == [
        sys.executable,
        "-P",
        "-m",
        "gpuherd.daemon",
        "--home",
        str(herd.home),
        "--fake-gpus",
    ]
    assert words[-1] == ""  # forked: the rest of the server's room for a command line
    assert os.getsid(daemon.pid) == daemon.pid  # a session of its own
    fds = {fd.fd: fd.path for fd in daemon.open_files()}
    assert os.readlink(f"/proc/{daemon.pid}/fd/0") == os.devnull
    assert os.readlink(f"/proc/{daemon.pid}/fd/1") == os.readlink(f"/proc/{daemon.pid}/fd/2")
    assert os.readlink(f"/proc/{daemon.pid}/fd/1") == str(herd.home / "daemon.log"), fds
    job = herd.submit("echo hello; echo $CUDA_VISIBLE_DEVICES")
    herd.wait_state(job, "succeeded")
    assert herd.cli("log", str(job)).stdout == "hello\n0\n"
    assert herd._daemons() == [daemon]
    herd.cli("daemon", "stop")
    assert gone(daemon.pid)


def test_the_cleanup_finds_and_kills_a_forked_daemon(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    daemon = psutil.Process(herd.pid)
    herd.cleanup()
    assert gone(daemon.pid)
    # (A zombie leader: its other threads may still be closing its files, the socket too.)
    wait_for(lambda: not herd.is_up(), what="the socket closed")


def test_a_server_killed_by_a_test_is_started_again(probe_dir: Path) -> None:
    forks.python_m("fsvprobe", ["none"], env=dict(os.environ), cwd=probe_dir)
    killed = forks.server()
    assert killed is not None
    signal.pidfd_send_signal(killed.pidfd, signal.SIGKILL)
    wait_for(lambda: not killed.alive(), what="the server killed")
    ran = forks.python_m("fsvprobe", ["none"], env=dict(os.environ), cwd=probe_dir)
    assert json.loads(ran.stdout)["preloaded"]
    assert forks.server() not in (None, killed)
