"""`log -f` of a log emptied under it (`: > stdout.log`, logrotate's copytruncate) says so and
reads on from its new start, as `tail -f` does: it waited for the log to grow past where it
had read, losing what was written below that, or printing a piece of a later line."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, read_line


def test_a_log_emptied_under_log_follow_is_followed_from_its_start(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = shared_daemon.submit(
        f"echo line-1; echo line-2; while [ ! -e {go} ]; do sleep 0.02; done; echo line-3"
    )
    log = Path(shared_daemon.wait_state(job, "running")["log_files"]["stdout"])
    follow = shared_daemon.popen("log", "-f", str(job))
    try:
        assert follow.stdout is not None
        buffer = bytearray()
        assert read_line(follow.stdout.fileno(), buffer) == b"line-1"
        assert read_line(follow.stdout.fileno(), buffer) == b"line-2"
        log.write_bytes(b"")  # (as `: > stdout.log`: the job appends on from its new end)
        go.touch()
        rest, err = follow.communicate(timeout=30)
    finally:
        follow.kill()
    assert log.read_text() == "line-3\n"
    assert (bytes(buffer) + rest).decode() == "line-3\n", err
    assert (
        err.decode()
        == f"gpuherd: job {job}: its log {log} was truncated; following from its start\n"
    )
