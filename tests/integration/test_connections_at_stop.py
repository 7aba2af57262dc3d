"""A connection made just before the daemon stops is answered, not dropped
(api/connections.py's GuardedH11.shutdown). A client connects, then sends its
request: one that had connected as a stop or a `daemon restart` began saw its connection
closed or reset without an answer, and said "the daemon went away before it answered", though
the daemon would have answered it (a Python loop of `herd.jobs()` through 5 restarts: about
one such error per client)."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

from conftest import Herd, wait_for
from waits import gone

ASK = b"GET /api/v1/daemon HTTP/1.1\r\nHost: gpuherd\r\nConnection: close\r\n\r\n"


def connected(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        raise
    return sock


def answer(sock: socket.socket) -> bytes:
    """All `sock` receives until the daemon closes it (a reset ends it too)."""
    sock.settimeout(15)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def no_new_connection(path: Path) -> bool:
    try:
        connected(path).close()
    except (FileNotFoundError, ConnectionRefusedError):
        return True
    return False


def answered_status(received: bytes, pid: int) -> bool:
    head, _, body = received.partition(b"\r\n\r\n")
    return head.startswith(b"HTTP/1.1 200") and json.loads(body)["pid"] == pid


def test_a_connection_made_before_a_stop_has_its_request_answered(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    pid, path = herd.pid, herd.client.socket_path
    early = connected(path)
    try:
        herd.client.request("POST", "/daemon/stop", {"mode": "leave"})
        # The daemon stops: no new connection is taken. Only now does `early` send.
        wait_for(lambda: no_new_connection(path), timeout=15)
        early.sendall(ASK)
        assert answered_status(answer(early), pid)
    finally:
        early.close()
    wait_for(lambda: gone(pid), what="the daemon's end")
    assert not path.exists()


def test_connections_queued_when_a_stop_begins_are_answered(herd: Herd) -> None:
    """The daemon held (SIGSTOP) while clients connect and send: their connections wait in the
    socket's queue, unaccepted, as the stop (SIGTERM) begins."""
    herd.start("--fake-gpus", "1")
    pid, path = herd.pid, herd.client.socket_path
    os.kill(pid, signal.SIGSTOP)
    queued: list[socket.socket] = []
    try:
        for _ in range(8):
            queued.append(connected(path))
            queued[-1].sendall(ASK)
        os.kill(pid, signal.SIGTERM)
        os.kill(pid, signal.SIGCONT)
        answers = [answer(sock) for sock in queued]
    finally:
        os.kill(pid, signal.SIGCONT)
        for sock in queued:
            sock.close()
    assert [answered_status(each, pid) for each in answers] == [True] * 8
    wait_for(lambda: gone(pid), what="the daemon's end")
