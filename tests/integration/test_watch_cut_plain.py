"""`ls -w` (and `gpus -w`) at a terminal too short for the listing cuts it to the window,
ending in `…` as a cut cell does, and with NO_COLOR writes no style for it: rich's Live
ended it with its own `...`, bold (red with colours), under NO_COLOR too."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from uuid import uuid4

from conftest import Herd

STYLE = re.compile(rb"\x1b\[[0-9;]*m")  # SGR: bold, colours, their reset


def watched(herd: Herd, args: list[str], env: dict[str, str], until: bytes) -> bytes:
    """What `gpuherd ARGS` writes to a terminal of 80 columns, up to `until` (or 15 s),
    then Ctrl-C, as a watch is ended."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**herd.env, "TERM": "xterm", "COLUMNS": "80", **env},
        start_new_session=True,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 15
    try:
        while until not in seen and (left := deadline - time.monotonic()) > 0:
            if select.select([leader], [], [], left)[0]:
                seen += os.read(leader, 4096)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
        os.close(leader)
    return seen


def test_a_cut_watch_ends_in_an_ellipsis_without_style(shared_daemon: Herd) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    ids = herd.submit_lines(["true"] * 8, "--hold", "--project", project)
    args = ["ls", "--project", project, "--columns", "id,state", "--watch"]
    seen = watched(herd, args, {"NO_COLOR": "1", "LINES": "5"}, "…".encode())
    text = seen.decode(errors="replace")
    assert "…" in text and "..." not in text, text
    assert not STYLE.search(seen), seen
    # The window's 5 rows: the header, the first 3 jobs to start, then `…` (the far end cut).
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")
    first = plain.split("…")[0].split("\n")
    assert [line.split() for line in first] == [
        ["ID", "STATE"],
        *[[str(job), "held"] for job in ids[:3]],
        [],
    ], text
