"""A command run on a pseudo-terminal, as a user types it (conftest.py re-exports it)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


def on_a_terminal(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float = 30,
    typed: bool = False,
    term: str = "xterm",
    keys: Sequence[bytes] = (),
) -> tuple[int, bytes]:
    """Run `args` on a terminal of 100 columns (a pseudo-terminal) of type `term`: its exit
    status, and all it wrote there up to its exit. `typed`: its stdin is the terminal too, as
    a command typed in one (else nothing: it reads no input). `keys` are typed there one at a
    time, a second after the start, then 0.3 s apart (a progress bar redraws meanwhile)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        args,
        stdin=follower if typed or keys else subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env={**env, "TERM": term, "COLUMNS": "100"},
        start_new_session=True,
    )
    os.close(follower)
    seen = b""

    def read_for(seconds: float) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([leader], [], [], left)[0]:
                return
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not chunk:
                return
            seen += chunk

    try:
        for n, key in enumerate(keys):
            read_for(1.0 if n == 0 else 0.3)
            os.write(leader, key)
        read_for(timeout)
        status = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(leader)
    return status, seen
