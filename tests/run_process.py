"""`gpuherd run` started as a user starts it, read line by line, and stopped with its jobs
(conftest.py re-exports these and gives the `runs` fixture)."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
import time
from pathlib import Path

import psutil

import forks
import forks_popen
from waits import kill_jobs_under, read_line


class RunProcess:
    """One `gpuherd run` started as Popen starts it, in its own session (signals reach it
    alone): `python -m gpuherd run`, forked (forks_popen.py); the console script itself is
    run in tests/e2e/test_run_cli.py."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = forks_popen.popen(
            "gpuherd",
            ["run", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self._buffer = bytearray()
        self.lines: list[str] = []

    def watchdog(self) -> psutil.Process:
        """The run's watchdog (runner_watchdog.py), its child while it runs: once the run is
        killed, it holds the output folder's lock until it has stopped the run's jobs and put
        its state away, and ends (a rerun is refused until then). Asked before the kill."""
        found = [
            child
            for child in psutil.Process(self.proc.pid).children()
            if "gpuherd.runner_watchdog" in child.cmdline()
        ]
        assert len(found) == 1, found
        return found[0]

    def write(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def unread(self) -> int:
        """Bytes written to its standard input that it has not read yet."""
        assert self.proc.stdin is not None
        asked = fcntl.ioctl(self.proc.stdin.fileno(), termios.FIONREAD, b"\0\0\0\0")
        return int(struct.unpack("i", asked)[0])

    def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.stdin = None  # so that communicate() does not flush it

    def expect_line(self, start: str, timeout: float = 15.0) -> str:
        """Read stdout lines until one starts with `start`; fail after `timeout`. (Not "contains":
        the `[0] started` lines hold the job's command, and its paths the test's name.)"""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.01, deadline - time.monotonic())
            line = read_line(self.proc.stdout.fileno(), self._buffer, left).decode()
            self.lines.append(line)
            if line.startswith(start):
                return line

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        """Wait for the exit; (status, the rest of stdout, all of stderr)."""
        self.close_stdin()
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # the whole output says where it stuck
            out = bytes(self._buffer) + (exc.output or b"")
            said = "\n".join([*self.lines, out.decode(), "stderr:", (exc.stderr or b"").decode()])
            raise AssertionError(f"gpuherd run still runs after {timeout:g}s:\n{said}") from None
        rest = bytes(self._buffer).decode() + out.decode()
        self._buffer.clear()
        return self.proc.returncode, rest, err.decode()

    def stop(self) -> None:
        """Kill it if it still runs (by its handle) and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:  # stdin: a pipe whose reader is gone
                    pass


class Runs:
    """Runs `gpuherd run` in a scratch folder; stops every run and job it started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.tmp = root / "tmpdir"  # the run's temporary state goes here: checked to be gone
        self.tmp.mkdir(exist_ok=True)
        self.env = {**os.environ, "TMPDIR": str(self.tmp)}
        self.env.pop("GPUHERD_HOME", None)
        self._started: list[RunProcess] = []

    def run(
        self, *args: str, input: str | None = "", timeout: float = 60, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`gpuherd run ARGS` to its end; `input` is its standard input (None: /dev/null)."""
        return self.gpuherd("run", *args, input=input, timeout=timeout, cwd=cwd)

    def gpuherd(
        self, *args: str, input: str | None = "", timeout: float = 60, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`gpuherd ARGS` to its end, in the runs' folder and environment (`sweep --dry-run`
        making a run's input, say); `input` None: no stdin (/dev/null). As `python -m gpuherd`
        forked by the worker's fork server (forks.py), whose imports it shares: started as a
        real process, each run spent ~70% of its CPU importing. The console script itself
        is run in tests/e2e/test_run_cli.py."""
        return forks.gpuherd(
            list(args),
            env=self.env,
            cwd=cwd or self.cwd,
            input=input,
            timeout=timeout,
            no_stdin=input is None,
        )

    def start(self, *args: str) -> RunProcess:
        process = RunProcess(list(args), self.cwd, self.env)
        self._started.append(process)
        return process

    def cleanup(self) -> None:
        for process in self._started:
            process.stop()
        kill_jobs_under(self.root)
