"""`gpuherd ls --watch` and `gpus --watch` draw the listing again "every 2 s until Ctrl-C".
A reading that fell in a daemon restart's gap (`daemon restart`, as after an upgrade; a crash
and a start) ended the watch with `no gpuherd daemon is running`, exit 3, where `wait` and
`log -f` wait for the daemon to come back."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd, wait_for


@pytest.mark.parametrize(
    ("command", "shown"), [("ls", b"queue-kept"), ("gpus", b"Fake GPU")]
)  # (what a reading shows: the held job's name, a GPU's)
def test_a_watch_goes_on_through_a_crash_and_a_start(
    daemon: Herd, tmp_path: Path, command: str, shown: bytes
) -> None:
    daemon.submit("--hold", "--name", "queue-kept", "--", "true")
    out = tmp_path / "watch.out"
    with out.open("wb") as sink:  # piped: each reading appended
        watch = subprocess.Popen(
            [sys.executable, "-m", "gpuherd", command, "--watch"],
            env=daemon.env,
            stdout=sink,
            stderr=subprocess.PIPE,
        )
    try:
        wait_for(lambda: shown in out.read_bytes(), what="a first reading")
        daemon.kill9()
        went = b"gpuherd: the daemon went away; waiting for it to come back"
        wait_for(lambda: went in out.read_bytes(), what="the watch to say the daemon went")
        assert watch.poll() is None  # still watching
        daemon.start()
        readings = out.read_bytes().count(b"\n\n")
        wait_for(lambda: out.read_bytes().count(b"\n\n") >= readings + 2, what="readings again")
        last = out.read_bytes().rstrip(b"\n").rsplit(b"\n\n", 1)[-1]
        assert went not in last and shown in last
        assert watch.poll() is None
    finally:
        watch.send_signal(signal.SIGINT)  # Ctrl-C
        watch.communicate(timeout=15)
