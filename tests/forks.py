"""A fork server for the tests' `python -m gpuherd ARGS` calls (Herd.cli): one process per
pytest worker that has imported the CLI's and the daemon's modules once, and forks a child
for each call; a `daemon start` in such a child forks its daemon too (forks_child.py).

Why: measured on the whole suite (benchmarks/suite_kinds.py), 5,086 CLI calls were 34% of its
CPU (~0.07-0.11 CPU-s each) and 758 daemon starts 38% (~0.84 CPU-s each, ~0.45 of it imports),
most of it interpreters starting and importing. Forked (2026-12-01, 2 busy cores, cgroup
CPU of 30 `ls` and 5 `daemon start` + `stop` through Herd.cli): `ls` 0.09 -> 0.014 CPU-s,
a start and stop 0.95 -> 0.25-0.34 CPU-s. The children run the real entry points (runpy, as
`python -m` does), so the tests still test the product: only the interpreter's start and the
imports are shared.

What a child has, as `python -m gpuherd ARGS` started by subprocess.run would: the request's
environment (os.environ, and with it the C environment), working folder, umask and argv (and
/proc/PID/cmdline); fds 0-2 are the caller's (its stdin, or the pipe its input goes through;
the pipes its output is captured by) and no other fd; sys.stdin/stdout/stderr built on them
as Python's start-up builds them; signals at their defaults (SIGPIPE and SIGXFSZ ignored,
SIGINT raising KeyboardInterrupt), none blocked; the caller's process group; and the end an
interpreter has: threads joined, exit handlers run, output flushed, SystemExit's code as
Python maps it, a traceback for an uncaught exception, death by SIGINT for KeyboardInterrupt.

What differs, and why it does not matter here: its parent is the server, not the test (the
test only waits for it); /proc/PID/cmdline ends in NULs (psutil: trailing '' words) and
/proc/PID/environ is the server's (set at its exec); the hash seed is the server's; the
modules are imported before the call, so what they compute at import (the variables in
IMPORTED_ENV, the locale, the interpreter's own PYTHON* settings) is the server's: a call
whose environment differs there, or whose resource limits differ, or whose command line does
not fit in ROOM, runs as a real process (`fallback_reason`), as does every call with
GPUHERD_TEST_NO_FORK=1 in its environment (or in pytest's: no server at all).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from forks_child import command_line
from forks_server import KILL, LENGTH, PID, STATUS, limits, receive

IMPORTED_ENV = (
    "GPUHERD_TEST_KEEP_ALIVE",
    "GPUHERD_TEST_SEEN_ALIVE_EVERY",
    "GPUHERD_TEST_ASK_BUDGET",
)
"""The variables gpuherd's modules read when imported (tests/integration/test_fsv_forks.py finds
them in src/): a child would have the server's values."""
IMPORTED_PREFIXES = ("PYTHON", "LC_", "LANG", "TZ")
"""Variables the interpreter reads at its start (its flags and paths, the locale, the time zone)."""
NO_FORK = "GPUHERD_TEST_NO_FORK"
_STARTING_ENV = dict(os.environ)
"""The server's environment: pytest's as it started (this is imported by the conftest), not
as a test may have changed it when the first call starts the server (calls whose variables
differ from the server's where its imports read them run as real processes)."""
ROOM = 16384
"""Bytes of command line a child has room for (forks_child.retitle): a longer call is a real
process."""


# ---- the caller's side (a pytest worker) -------------------------------------------------------


class ForkServer:
    """The server process of this pytest worker, started on first use."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="forkserver-"))
        self.socket = self.folder / "socket"
        self.env = dict(_STARTING_ENV)
        self.limits = limits()
        self.owner = os.getpid()
        server = Path(__file__).with_name("forks_server.py")
        argv = [sys.executable, str(server), str(self.socket), "room:" + "." * ROOM]
        self.room = len(command_line(argv))
        # Not this worker's child (sh starts it and exits): tests assert that a detached
        # daemon left their process no child to reap. Its stdin stays this worker's pipe.
        launcher = subprocess.Popen(
            [
                "/bin/sh",
                "-c",
                'exec 3<&0; "$@" <&3 3<&- & echo $!',
                "sh",
                *argv,
            ],  # (dash: <&0 is not enough)
            stdin=subprocess.PIPE,  # its end: the server exits when this worker does
            stdout=subprocess.PIPE,
            env=self.env,
            cwd=self.folder,
        )
        launcher.wait()
        assert launcher.stdin is not None and launcher.stdout is not None
        self.stdin, self.stdout = launcher.stdin, launcher.stdout
        self.pid = int(self.stdout.readline())
        self.pidfd = os.pidfd_open(self.pid)  # (before "ready": it cannot have exited unseen)
        ready = self.stdout.readline()
        if ready != b"ready\n":
            self.stop()
            raise RuntimeError(f"the fork server did not start (it said {ready!r})")

    def alive(self) -> bool:
        return not select.select([self.pidfd], [], [], 0)[0]

    def stop(self) -> None:
        """Close its stdin: it exits (SIGKILL if it has not within 30 s)."""
        self.stdin.close()
        if not select.select([self.pidfd], [], [], 30)[0]:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        os.close(self.pidfd)
        self.stdout.close()
        for leftover in (self.socket, self.folder):
            with contextlib.suppress(OSError):
                leftover.unlink() if leftover.is_socket() else leftover.rmdir()

    def fallback_reason(self, argv: list[str], env: dict[str, str], cwd: Path) -> str | None:
        """Why `argv` with `env` in `cwd` must be a real process (None: it may be forked)."""
        if env.get(NO_FORK):
            return f"{NO_FORK} is set"
        names = {*env, *self.env}
        for name in sorted(names):
            imported = name in IMPORTED_ENV or name.startswith(IMPORTED_PREFIXES)
            if imported and env.get(name) != self.env.get(name):
                return f"{name} differs from the server's"
        if len(command_line(argv)) > self.room:
            return "its command line is longer than the server's room for it"
        if limits() != self.limits:
            return "a resource limit differs from the server's"
        if not cwd.is_dir():
            return "no such working folder (subprocess says so)"
        try:
            os.fstat(0)
        except OSError:
            return "this process has no stdin to pass on"
        return None

    def run(
        self,
        module: str,
        args: list[str],
        env: dict[str, str],
        cwd: Path,
        input: str | None,
        timeout: float | None,
        no_stdin: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """subprocess.run(ARGV, env=, cwd=, input=, timeout=, capture_output=True, text=True),
        ARGV being `python -m MODULE ARGS`, as a child forked by the server; `no_stdin` (with
        input None): stdin=subprocess.DEVNULL."""
        argv = [sys.executable, "-m", module, *args]
        encoding = "utf-8" if sys.flags.utf8_mode else _locale_encoding()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if input is not None:
            in_r, in_w = os.pipe()
        else:
            in_r, in_w = (os.open(os.devnull, os.O_RDONLY) if no_stdin else 0), -1
        try:
            conn, _ = self.fork(argv, env, cwd, (in_r, out_w, err_w))
        finally:
            for fd in (out_w, err_w, in_r or -1):  # (0: the caller's own stdin)
                if fd >= 0:
                    os.close(fd)
        try:
            data = input.encode(encoding) if input is not None else b""
            out, err, status = _communicate(conn, in_w, out_r, err_r, data, timeout)
        except BaseException:
            conn.close()  # the server kills the child, as subprocess.run does
            raise
        finally:
            for fd in (out_r, err_r):
                os.close(fd)
        conn.close()
        if status is None:  # (only with a timeout)
            raise subprocess.TimeoutExpired(argv, timeout or 0, output=out, stderr=err)
        return subprocess.CompletedProcess(
            argv, os.waitstatus_to_exitcode(status), _text(out, encoding), _text(err, encoding)
        )

    def fork(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        stdio: tuple[int, int, int],
        new_session: bool = False,
    ) -> tuple[socket.socket, int]:
        """Have the server fork a child that becomes ARGV with `stdio` as its fds 0-2 (in a
        session of its own with `new_session`): the connection on which its wait status will
        come (closing it, or sending KILL, kills the child), and its pid."""
        request = {"argv": argv, "env": env, "cwd": str(cwd), "umask": _umask()}
        if new_session:
            request["new_session"] = True
        payload = json.dumps(request).encode()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(str(self.socket))
            socket.send_fds(conn, [LENGTH.pack(len(payload))], list(stdio))
            conn.sendall(payload)
            (pid,) = PID.unpack(receive(conn, PID.size))  # it is forked
        except BaseException:
            conn.close()
            raise
        return conn, pid


def _locale_encoding() -> str:
    import locale

    return locale.getencoding()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _text(data: bytes, encoding: str) -> str:
    """As subprocess decodes a text-mode pipe: universal newlines."""
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def _communicate(
    conn: socket.socket, in_w: int, out_r: int, err_r: int, data: bytes, timeout: float | None
) -> tuple[bytes, bytes, int | None]:
    """Feed the child's stdin, read its stdout and stderr to their ends, and receive its wait
    status; on timeout, kill it (through the server, which has not reaped it: no pid reused)
    and wait for its end: the status is then None."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    deadline = None if timeout is None else time.monotonic() + timeout
    status: int | None = None
    timed_out = False
    with selectors.DefaultSelector() as selector:
        selector.register(out_r, selectors.EVENT_READ)
        selector.register(err_r, selectors.EVENT_READ)
        selector.register(conn, selectors.EVENT_READ)
        if in_w >= 0:
            os.set_blocking(in_w, False)
            selector.register(in_w, selectors.EVENT_WRITE)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                conn.sendall(KILL)
                deadline, timed_out = None, True
                _stop_reading(selector, (out_r, err_r))  # as subprocess.run: the status only
                continue
            for key, _ in selector.select(left):
                if key.fileobj is conn:
                    (status,) = STATUS.unpack(receive(conn, STATUS.size))
                    selector.unregister(conn)
                elif key.fd == in_w:
                    try:
                        written = os.write(in_w, data[:65536])
                    except BrokenPipeError:
                        written = len(data)  # subprocess ignores a child that stopped reading
                    data = data[written:]
                    if not data:
                        selector.unregister(in_w)
                        os.close(in_w)
                else:
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        chunks[key.fd].append(chunk)
                    else:
                        selector.unregister(key.fd)
        if in_w >= 0 and in_w in selector.get_map():  # (a timeout before all was written)
            os.close(in_w)
    output = (b"".join(chunks[out_r]), b"".join(chunks[err_r]))
    return (*output, None if timed_out else status)


def _stop_reading(selector: selectors.BaseSelector, fds: tuple[int, ...]) -> None:
    for fd in fds:
        if fd in selector.get_map():
            selector.unregister(fd)


_server: ForkServer | None = None
_refused = False
_starting = threading.Lock()  # (tests that call the CLI from threads: one server)


def running_server() -> ForkServer | None:
    """This worker's server: started on first use, and again if a test killed it (its
    process's children); None where it cannot start, or in a process forked from the worker."""
    global _server, _refused
    with _starting:
        if _server is not None and not _server.alive():
            _server.stop()  # (its pipes and folder)
            _server = None
        if _server is None and not _refused and not os.environ.get(NO_FORK):
            try:
                _server = ForkServer()
            except (OSError, RuntimeError) as exc:  # say it once, and run real processes
                print(f"tests/forks.py: no fork server ({exc}): real processes", file=sys.stderr)
                _refused = True
            else:
                atexit.register(stop)
        return _server if _server is not None and _server.owner == os.getpid() else None


def gpuherd(args: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """`python -m gpuherd ARGS` with its output captured as text: forked by this worker's
    server, or a real process where a fork would not behave as one (fallback_reason).
    `options` as python_m's."""
    return python_m("gpuherd", args, **options)


def python_m(
    module: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    input: str | None = None,
    timeout: float | None = None,
    no_stdin: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS`, as gpuherd() runs gpuherd's (tests of the server run their
    own probe module). `input` None: the caller's stdin, or none (/dev/null) with
    `no_stdin`."""
    server = running_server()
    argv = [sys.executable, "-m", module, *args]
    if server is None or server.fallback_reason(argv, env, cwd) is not None:
        return subprocess.run(
            argv,
            env=env,
            cwd=cwd,
            input=input,
            stdin=subprocess.DEVNULL if no_stdin and input is None else None,
            timeout=timeout,
            capture_output=True,
            text=True,
        )
    return server.run(module, args, env, cwd, input, timeout, no_stdin)


def server() -> ForkServer | None:
    """This worker's server, if one is running (for tests of it)."""
    return _server


def stop() -> None:
    """Stop this worker's server (at the session's end)."""
    global _server
    if _server is not None and _server.owner == os.getpid():  # (not a fork of the worker's)
        _server.stop()
        _server = None
