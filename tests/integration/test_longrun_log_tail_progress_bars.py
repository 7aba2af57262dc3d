"""`gpuherd log -n N` of a long training's log through a real daemon: a progress bar redrawn
in place (`\\r`, as tqdm draws) for days is one line of hundreds of MB by its newlines; its
tail must be the bar's last drawings, not that whole history."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from conftest import Herd, read_line, wait_for

# 200,000 drawings of a bar (~5 MB with no newline) after an epoch's summary; the job then
# waits for `go`, so the tail is asked of a bar still being drawn, then ends its line.
DRAWING = "\r%6d/200000 [#####     ]"
BAR = (
    "python -c \"import sys; w = sys.stdout.write; w('epoch 1 loss 0.5\\n'); "
    "[w('\\r%6d/200000 [#####     ]' % i) for i in range(200000)]; sys.stdout.flush()\"; "
)
LAST = b"199999/200000 [#####     ]"


def log_bytes(herd: Herd, *args: str) -> bytes:
    """`gpuherd log ARGS`'s stdout as bytes (text mode would turn each `\\r` into a newline)."""
    return subprocess.run(
        [sys.executable, "-m", "gpuherd", "log", *args],
        env=herd.env,
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout


def test_the_tail_of_a_bar_redrawn_for_days_is_its_last_drawings(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    wait_for_go = f"while [ ! -e {go} ]; do sleep 0.02; done; echo; echo done"
    job_id = shared_daemon.submit(BAR + wait_for_go)
    log = shared_daemon.home / "jobs" / str(job_id) / "attempt-1" / "stdout.log"
    size = len("epoch 1 loss 0.5\n") + len(DRAWING % 0) * 200_000
    wait_for(lambda: log.exists() and log.stat().st_size == size, what="the bar's drawings")

    # The bar's drawings of its last 64 KiB, from a drawing's start (was the whole 5 MB).
    tail = log_bytes(shared_daemon, str(job_id), "-n", "2")
    assert log.read_bytes().endswith(tail) and tail.endswith(b"\r" + LAST)
    assert 64 * 1024 < len(tail) <= 64 * 1024 + len(DRAWING % 0) and tail[:1].isdigit()

    # `log -f -n 1` starts there too, then follows.
    follow = shared_daemon.popen("log", str(job_id), "-f", "-n", "1")
    assert follow.stdout is not None and follow.stderr is not None
    buffer = bytearray()
    deadline = time.monotonic() + 30
    while not buffer.endswith(LAST):  # (its first bytes took over 1 s at load 16)
        left = deadline - time.monotonic()
        assert left > 0 and select.select([follow.stdout], [], [], left)[0], bytes(buffer[-100:])
        chunk = os.read(follow.stdout.fileno(), 65536)
        assert chunk, (bytes(buffer[-100:]), follow.stderr.read())  # (it ended)
        buffer += chunk
    assert bytes(buffer) == tail  # the line unfinished: the job draws on until `go`
    go.touch()
    assert read_line(follow.stdout.fileno(), buffer) == tail
    assert read_line(follow.stdout.fileno(), buffer) == b"done"
    assert follow.wait(timeout=15) == 0
    follow.stdout.close()
    follow.stderr.close()

    # The bar's line ended: the same drawings, then the lines after it.
    assert log_bytes(shared_daemon, str(job_id), "-n", "3") == tail + b"\ndone\n"
    # A bar of a few drawings is a line as it is (each under 64 KiB: `tail -n`'s lines).
    short = shared_daemon.submit("printf 'epoch 1\\n\\r1/3\\r2/3\\r3/3\\nepoch 2\\n'")
    shared_daemon.wait_state(short, "succeeded")
    assert log_bytes(shared_daemon, str(short), "-n", "2") == b"\r1/3\r2/3\r3/3\nepoch 2\n"


def test_docker_and_kubectls_tail_option_is_answered_with_lines(herd: Herd) -> None:
    said = herd.usage_error("log", "3", "--tail", "20")  # (no daemon: refused before asking)
    assert "No such option '--tail': use -n N (--lines N): the last N lines" in said
