"""`gpuherd log -n 0` and `log -f -n 0`: none of the log so far, as `tail -n 0` (with -f:
only what the job writes from now on). The CLI refused 0 (`--lines: 0 is out of range`), and
so did the HTTP API's `lines` and the Python API's `lines=`."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd as gpuherd_api
from conftest import Herd, read_line, wait_for
from gpuherd.errors import InvalidValue


def _running_with_old_lines(herd: Herd, stop: Path) -> int:
    """A job that has printed 1..5 and then prints `later` every 50 ms until `stop` exists:
    its id. (Again and again: a follow from the log's end sees one, whenever it connects.)"""
    job_id = herd.submit(
        f"seq 1 5; until [ -e {stop} ]; do echo later; sleep 0.05; done; echo last"
    )
    herd.wait_state(job_id, "running")
    # (the whole log: its last lines are all `later` soon, at a load that slows this ask)
    wait_for(lambda: "5\nlater\n" in herd.cli("log", str(job_id)).stdout, what="lines")
    return job_id


def test_log_n_0_prints_nothing_and_says_nothing(shared_daemon: Herd) -> None:
    ended = shared_daemon.submit("seq 1 3; echo oops >&2")
    shared_daemon.wait_state(ended, "succeeded")
    for args in (("-n", "0"), ("--lines", "0")):
        done = shared_daemon.cli("log", str(ended), *args)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert shared_daemon.cli("log", str(ended), "-n", "1").stdout == "3\n"  # (N still works)
    refused = shared_daemon.usage_error("log", str(ended), "-n", "-1")
    assert "use a whole number from 0 up" in refused


def test_follow_n_0_prints_only_new_output(shared_daemon: Herd, tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    job_id = _running_with_old_lines(shared_daemon, stop)
    follow = shared_daemon.popen("log", str(job_id), "-f", "-n", "0")
    try:
        assert follow.stdout is not None
        assert read_line(follow.stdout.fileno(), bytearray()) == b"later"  # not 1..5 first
        stop.touch()
        out, err = follow.communicate(timeout=30)
        assert follow.returncode == 0 and out.endswith(b"last\n") and err == b""
    finally:
        follow.kill()
        follow.communicate()


def test_the_http_and_python_apis_take_lines_0(shared_daemon: Herd, tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    job_id = _running_with_old_lines(shared_daemon, stop)
    client = shared_daemon.client
    assert b"".join(client.download(f"/jobs/{job_id}/log", lines=0)) == b""
    job = gpuherd_api.connect(shared_daemon.home).job(job_id)
    assert job.logs(lines=0) == ""
    assert job.logs(lines=1) == "later\n"
    texts = job.follow(lines=0)
    assert next(texts).startswith("later\n")  # not 1..5 first
    stop.touch()
    assert "".join(texts).endswith("last\n")
    with pytest.raises(InvalidValue, match=r"lines is a whole number from 0 up, got -1"):
        job.logs(lines=-1)
