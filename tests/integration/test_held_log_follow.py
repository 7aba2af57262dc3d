"""`log -f` reads a log through a file it holds open (api/held_log.py): a retry whose shared
`--output` file was deleted follows the new file; a follower that goes away, or many of them,
leave no file open in the daemon; the dashboard's live log reads on a deleted log too."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
from test_show_ls_log_gaps import deleted_log_job

from conftest import Herd, UnixConnection, read_line, wait_for


def test_a_retry_after_its_shared_output_was_deleted_is_followed_in_the_new_file(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    out, deleted = tmp_path / "out.log", tmp_path / "deleted"
    job = shared_daemon.submit(
        "--output", str(out), "--retries", "1",
        f'if [ "$GPUHERD_ATTEMPT" = 1 ]; then echo first; '
        f"while [ ! -e {deleted} ]; do sleep 0.02; done; exit 1; fi; echo second",
    )  # fmt: skip
    follow = shared_daemon.popen("log", "-f", str(job))
    try:
        assert follow.stdout is not None
        buffer = bytearray()
        assert read_line(follow.stdout.fileno(), buffer) == b"first"
        out.unlink()  # attempt 2 writes a new file of that name
        deleted.touch()
        rest, err = follow.communicate(timeout=30)
    finally:
        follow.kill()
    # (it printed attempt 1's deleted text again, from its start, and never attempt 2's)
    assert (bytes(buffer) + rest).decode() == "second\n", err
    assert f"job {job}: attempt 2 began" in err.decode()
    assert out.read_text() == "second\n"


def _open_files(pid: int, under: Path) -> list[str]:
    return [f.path for f in psutil.Process(pid).open_files() if f.path.startswith(str(under))]


def test_followers_that_go_away_leave_no_log_open_in_the_daemon(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = shared_daemon.submit(f"echo up; while [ ! -e {go} ]; do sleep 0.02; done")
    log = Path(shared_daemon.wait_state(job, "running")["log_files"]["stdout"])
    # (running is recorded as the job's shell starts; it opens its logs a moment later)
    wait_for(lambda: log.is_file() and log.stat().st_size, what="the log to be written")
    pid = shared_daemon.pid
    followers = [shared_daemon.popen("log", "-f", str(job)) for _ in range(8)]
    try:
        for follower in followers:
            assert follower.stdout is not None
            assert read_line(follower.stdout.fileno(), bytearray()) == b"up"
        held = wait_for(lambda: len(_open_files(pid, log.parent)) >= 8 or None, what="8 fds")
        assert held
    finally:
        for follower in followers:
            follower.kill()
            follower.communicate()
    wait_for(lambda: not _open_files(pid, log.parent), what="the followers' files closed")
    go.touch()
    shared_daemon.wait_state(job, "succeeded")
    assert os.path.exists(go)


def test_the_dashboards_live_log_reads_on_a_log_deleted_under_the_job(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    job, log, deleted, go = deleted_log_job(shared_daemon, tmp_path)
    conn = UnixConnection(shared_daemon.client.socket_path, timeout=15)
    try:
        conn.request("GET", f"/ui/jobs/{job}/stream")  # a job's page's live log
        response = conn.getresponse()
        assert response.status == 200
        shown: list[str] = []
        event = ""

        def shown_until(text: str) -> None:  # (the stdout events' text, to `text`)
            nonlocal event
            while text not in "".join(shown):
                line = response.readline().decode()
                assert line, f"the stream ended before {text!r}: {shown}"
                if line.startswith("event: "):
                    event = line[7:].strip()
                elif line.startswith("data: ") and event == "stdout":
                    shown.append(line[6:])

        shown_until("first")
        log.unlink()
        deleted.touch()
        shown_until("after")  # (it went quiet: the log was opened by name at each look)
        go.touch()
        shown_until("last")
    finally:
        conn.close()
    shared_daemon.wait_state(job, "succeeded")
