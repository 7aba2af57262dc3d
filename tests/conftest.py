"""Shared fixtures: a real daemon in a temporary GPUHERD_HOME, driven through the console script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gpuherd.client import Client


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


class Herd:
    """One GPUHERD_HOME with helpers to run the CLI and start, stop or crash its daemon."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {**os.environ, "GPUHERD_HOME": str(home)}
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.client = Client(home)

    def cli(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "gpuherd", *args],
            env=self.env,
            text=True,
            capture_output=True,
            input=input,
            timeout=timeout,
            cwd=self.home.parent,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"gpuherd {' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}"
            )
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)

    def start(self, *options: str) -> None:
        self.cli("daemon", "start", *options)

    @property
    def pid(self) -> int:
        return int(self.client.get("/daemon")["pid"])

    def kill9(self) -> None:
        """Crash the daemon (SIGKILL) and wait until it is gone."""
        process = psutil.Process(self.pid)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def submit(self, *args: str) -> int:
        return int(self.cli("submit", "-q", *args).stdout.split()[0])

    def job(self, job_id: int) -> dict[str, Any]:
        return dict(self.client.get(f"/jobs/{job_id}"))

    def wait_state(self, job_id: int, *states: str, timeout: float = 15.0) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            job = self.job(job_id)
            return job if job["state"] in states else None

        return dict(wait_for(reached, timeout, f"job {job_id} to be {'/'.join(states)}"))

    def cleanup(self) -> None:
        """Stop the daemon and every process of every job this home started."""
        if self.client.is_up():
            pid = self.pid
            try:
                psutil.Process(pid).kill()
                psutil.Process(pid).wait(10)
            except psutil.NoSuchProcess:
                pass
        for proc in psutil.process_iter():
            try:
                if proc.environ().get("GPUHERD_JOB_DIR", "").startswith(str(self.home)):
                    os.killpg(proc.pid, signal.SIGKILL) if os.getpgid(
                        proc.pid
                    ) == proc.pid else proc.kill()
            except (psutil.Error, OSError):
                continue


@pytest.fixture
def herd(tmp_path: Path) -> Iterator[Herd]:
    herd = Herd(tmp_path / "home")
    try:
        yield herd
    finally:
        herd.cleanup()


@pytest.fixture
def daemon(herd: Herd) -> Herd:
    """A running daemon with 4 fake GPUs (one slot each)."""
    herd.start("--fake-gpus", "4")
    return herd
