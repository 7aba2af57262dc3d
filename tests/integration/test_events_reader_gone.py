"""A reader of `GET /api/v1/events` that hangs up during a burst of changes: the daemon wrote
the burst on at once, without a turn of its event loop between two events, so it did not see
the hang-up until the end, and asyncio logged `socket.send() raised exception.` for each
write after the fifth: hundreds to thousands of lines in daemon.log per reader gone (which
grows without a cap). A burst now goes in few writes, with a turn of the loop after each."""

from __future__ import annotations

import socket
import threading

from conftest import Herd, stays, wait_for

SEND_FAILED = "socket.send() raised exception."


def _said(herd: Herd) -> int:
    return (herd.home / "daemon.log").read_text().count(SEND_FAILED)


def _hang_up_during_the_burst(herd: Herd, start_burst: threading.Thread) -> None:
    """Read /events as fast as it comes (as curl does: the daemon's writes go straight out),
    start the burst, and hang up once 64 KiB of it came."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(herd.client.socket_path))
    sock.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = b""
    while b": connected" not in got:
        got += sock.recv(65536)
    start_burst.start()
    burst = 0
    while burst < 65536:
        chunk = sock.recv(65536)
        assert chunk, "the stream ended"
        burst += len(chunk)
    sock.close()


def test_a_reader_gone_during_a_burst_is_not_written_to_for_the_whole_burst(
    daemon: Herd,
) -> None:
    daemon.cli("pause")  # (nothing starts: each release and hold is one change a job)
    jobs = daemon.submit_lines(["true"] * 3000, "--hold")
    ids = f"{jobs[0]}-{jobs[-1]}"
    release = threading.Thread(target=daemon.cli, args=("release", ids))
    _hang_up_during_the_burst(daemon, release)
    release.join(60)
    daemon.cli("hold", ids)
    wait_for(lambda: daemon.job(jobs[-1])["state"] == "held", what="the last hold")
    stays(lambda: _said(daemon) <= 10, 1.0, f"at most 10 of {SEND_FAILED!r} in daemon.log")
