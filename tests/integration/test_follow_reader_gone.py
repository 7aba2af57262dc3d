"""`log -f` and `daemon log -f` end as soon as their reader goes away (`| grep -m1 ready`),
as `tail -f` does, not at the next line written, which a quiet job or daemon may write hours
later: cli/reader_watch.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import Herd, read_line, wait_for


def _ends_once_its_reader_left(follow: subprocess.Popen[bytes], first: bytes) -> None:
    """Read `follow`'s first line, close the pipe as `grep -m1` does, and see it end quietly
    with nothing more written to what it follows."""
    try:
        assert follow.stdout is not None and follow.stderr is not None
        assert read_line(follow.stdout.fileno(), bytearray()).endswith(first)
        follow.stdout.close()
        wait_for(lambda: follow.poll() is not None, 10, "the follow to end")
        assert follow.returncode == 0
        assert follow.stderr.read() == b""  # (as `gpuherd log 5 | head` ends: no word)
    finally:
        follow.kill()
        follow.communicate()


def test_log_follow_of_a_quiet_job_ends_once_its_reader_went_away(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = shared_daemon.submit(f"echo ready; while [ ! -e {go} ]; do sleep 0.05; done; echo more")
    _ends_once_its_reader_left(shared_daemon.popen("log", "-f", str(job)), b"ready")
    assert shared_daemon.job(job)["state"] == "running"  # quiet all along: it wrote no more
    go.touch()
    shared_daemon.wait_state(job, "succeeded")


def test_daemon_log_follow_ends_once_its_reader_went_away(herd: Herd) -> None:
    herd.home.mkdir(parents=True)
    # (no daemon: nothing is written to the log while it is followed)
    (herd.home / "daemon.log").write_text("... INFO gpuherd.daemon: daemon 7 serving ...\n")
    _ends_once_its_reader_left(herd.popen("daemon", "log", "-f"), b"serving ...")
