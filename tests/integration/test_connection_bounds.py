"""Connections are kept in bounds (api/connections.py): one that sends no whole request in
time is closed, on the Unix socket and the TCP listener alike, while a request that came
whole (a long poll, a log follow) runs on; and beyond the cap a new connection takes an idle
one's place, or is answered 503 when every one has a request under way. Before, an idle
connection was kept for good, and enough of them hung the daemon at its fd limit."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import Herd, communicated, wait_for, wait_for_long_poll

DEADLINE = 1.0
CAP = 4


def started(herd: Herd, **knobs: str) -> Herd:
    herd.env.update(knobs)
    herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
    return herd


def tcp_address(herd: Herd) -> tuple[str, int]:
    host, _, port = herd.client.get("/daemon/listen")["address"].rpartition(":")
    return host, int(port)


def unix(herd: Herd) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(herd.client.socket_path))
    return sock


def read_to_the_end(sock: socket.socket, within: float = 15.0) -> bytes | None:
    """All `sock` receives until the daemon closes it (an end of file, or a reset: a close
    with a request left unread); None if it did not within `within` s."""
    sock.settimeout(within)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def closed_by_the_daemon(sock: socket.socket) -> bool:
    return read_to_the_end(sock) is not None


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def test_a_connection_without_a_whole_request_is_closed_after_the_deadline(
    herd: Herd, sockets: list[socket.socket]
) -> None:
    started(herd, GPUHERD_TEST_REQUEST_DEADLINE=str(DEADLINE))
    address = tcp_address(herd)
    for connect in (lambda: socket.create_connection(address), lambda: unix(herd)):
        silent, partial, answered = (connect() for _ in range(3))
        sockets += [silent, partial, answered]
        partial.sendall(b"GET /api/v1/daemon HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        # A whole request answered, then part of the next: the deadline runs from the answer.
        answered.sendall(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\n")
        assert closed_by_the_daemon(silent)
        assert closed_by_the_daemon(partial)
        assert closed_by_the_daemon(answered)
        # A header line every 0.2 s keeps no connection open past the deadline either.
        trickling = connect()
        sockets.append(trickling)
        ended = time.monotonic() + 15
        trickling.sendall(b"GET / HTTP/1.1\r\n")
        with pytest.raises(OSError):  # (a broken pipe, or a reset)
            while time.monotonic() < ended:
                trickling.sendall(b"X-A: b\r\n")
                time.sleep(0.2)
    assert herd.cli("ls").returncode == 0


def test_a_request_that_came_whole_is_not_cut_by_the_deadline(herd: Herd, tmp_path: Path) -> None:
    started(herd, GPUHERD_TEST_REQUEST_DEADLINE=str(DEADLINE))
    go = tmp_path / "go"
    job = herd.submit(f"echo started; while [ ! -e {go} ]; do sleep 0.05; done; echo done")
    herd.wait_state(job, "running")
    waiting = herd.popen("wait", str(job))
    following = herd.popen("log", "-f", str(job))
    for process in (waiting, following):  # each holds its connection 3 deadlines and more
        wait_for_long_poll(psutil.Process(process.pid), held=3 * DEADLINE)
    go.touch()
    out, err = communicated(waiting)
    assert waiting.returncode == 0, err
    out, err = communicated(following)
    assert following.returncode == 0, err
    assert out.decode().splitlines() == ["started", "done"]


def test_over_the_cap_an_idle_connection_makes_room_for_the_cli(
    herd: Herd, sockets: list[socket.socket]
) -> None:
    started(herd, GPUHERD_TEST_CONNECTION_CAP=str(CAP))
    sockets += [unix(herd) for _ in range(CAP)]
    tcp = [socket.create_connection(tcp_address(herd)) for _ in range(CAP + 2)]
    sockets += tcp
    assert herd.cli("ls").returncode == 0  # (a listener's cap is its own: TCP's full, too)
    assert closed_by_the_daemon(sockets[0])  # the longest idle, for the CLI's connection
    assert closed_by_the_daemon(tcp[0]) and closed_by_the_daemon(tcp[1])


def test_over_the_cap_with_every_request_under_way_a_new_connection_is_refused(
    herd: Herd, tmp_path: Path
) -> None:
    started(herd, GPUHERD_TEST_CONNECTION_CAP=str(CAP))
    go = tmp_path / "go"
    job = herd.submit(f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.wait_state(job, "running")
    waits = [herd.popen("wait", str(job)) for _ in range(CAP)]
    try:
        for process in waits:
            wait_for_long_poll(psutil.Process(process.pid), held=0.5)
        with unix(herd) as sock:
            # (answered and closed as it is accepted: the request may find it closed, as
            # the CLI's may, which then reads the answer: client_http.send_and_answer)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(b"GET /api/v1/daemon HTTP/1.1\r\nHost: gpuherd\r\n\r\n")
            answer = read_to_the_end(sock)
        assert answer is not None and answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"the daemon has 4 connections open here, its most" in answer
        refused = herd.cli("ls", check=False)
        assert refused.returncode == 1
        assert "4 connections open here, its most" in refused.stderr, refused.stderr
    finally:
        go.touch()
        for process in waits:
            communicated(process)
    assert [process.returncode for process in waits] == [0] * CAP
    wait_for(lambda: herd.cli("ls", check=False).returncode == 0, what="ls answered again")
