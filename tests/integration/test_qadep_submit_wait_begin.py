"""`submit --wait --begin WHEN` says the job is held until then, as `submit --wait --hold`
says it is held until released: it waited in silence, for hours maybe, as though hung."""

from __future__ import annotations

import re

from conftest import Herd, read_line


def test_a_job_waiting_for_its_begin_time_says_so(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    waiting = daemon.popen("submit", "--wait", "--begin", "+1h", "--", "true")
    try:
        assert waiting.stdout is not None and waiting.stderr is not None
        line = read_line(waiting.stdout.fileno(), bytearray()).decode()
        job_id = int(line.removeprefix("submitted job "))
        said = read_line(waiting.stderr.fileno(), bytearray()).decode()
        assert re.fullmatch(
            rf"gpuherd: job {job_id} is held until (\w+ \d+ )?\d\d:\d\d(:\d\d)? \(--begin\): "
            rf"waiting until then \(gpuherd release {job_id} starts it now\)",
            said,
        ), said
        daemon.cli("release", str(job_id))
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert (waiting.returncode, out, err) == (0, b"", b"")


def test_a_begin_already_past_says_nothing_of_a_hold(shared_daemon: Herd) -> None:
    done = shared_daemon.cli("submit", "--wait", "--begin", "now", "--", "true")
    assert "held" not in done.stderr
