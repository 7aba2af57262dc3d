"""`gpuherd run` reading the commands typed at its terminal draws no progress bar there: the
bar's redraws (ten a second) cleared the line being typed, so each key vanished as it was
typed. A run whose commands come from a file keeps its bar on the terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from conftest import GPUHERD_BIN, Runs, on_a_terminal

BAR = "━".encode()


def _typed_run(runs: Runs, keys: list[bytes], timeout: float = 60) -> tuple[int, bytes]:
    """`gpuherd run` with a terminal for stdin, stdout and stderr; `keys` typed one at a
    time, a moment apart (long enough for the bar's redraws, when there is one)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [GPUHERD_BIN, "run", "--fake-gpus", "1", "--output-dir", str(runs.root / "out")],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=runs.cwd,
        env={**runs.env, "TERM": "xterm", "COLUMNS": "100"},
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
            except OSError:  # EIO: the run has ended
                return
            if not chunk:
                return
            seen += chunk

    try:
        read_for(1.0)
        for key in keys:
            os.write(leader, key)
            read_for(0.3)
        read_for(timeout)  # to the run's end (the last key is Ctrl-D)
        status = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(leader)
    return status, seen


def test_commands_typed_at_the_terminal_stay_in_view(runs: Runs) -> None:
    keys = [bytes([key]) for key in b"echo hi\n"] + [b"\x04"]
    status, seen = _typed_run(runs, keys)
    text = seen.decode(errors="replace")
    assert status == 0, text
    assert BAR not in seen, text  # no bar, and so no redraw to clear what is typed
    assert "\x1b[2K" not in text, text
    assert "echo hi\r\n[0] started on GPU 0: echo hi\r\n" in text, text
    assert text.endswith(f"1 succeeded, 0 failed; logs in {runs.root / 'out'}\r\n"), text


def test_a_run_of_a_job_file_still_draws_its_bar_on_the_terminal(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("sleep 0.5\n")
    status, seen = on_a_terminal(
        [GPUHERD_BIN, "run", "--fake-gpus", "1", "jobs.txt"], runs.env, runs.cwd, typed=True
    )
    assert status == 0, seen
    assert BAR in seen, seen
