"""The cap on a request body (gpuherd.api.limits): a body over it is refused with 413 before
it is read whole, and the daemon goes on answering everyone else."""

from __future__ import annotations

import contextlib
import json
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

import gpuherd.client
from conftest import Herd
from gpuherd.body_cap import MAX_BODY_BYTES, MAX_FORM_BYTES
from gpuherd.errors import HerdError

MiB = 1024 * 1024
SLACK = 16 * MiB
"""What may be in flight (socket and server buffers) when a streamed body is cut off."""


def _raw(herd: Herd) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(herd.client.socket_path))
    return sock


def _answer(sock: socket.socket) -> tuple[int, str]:
    """The status and body of the answer. The daemon closes the connection after it, with
    the rest of the body unread: Linux then resets the connection once the answer is read."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def _head(path: str, extra: str, kind: str = "application/json", host: str = "gpuherd") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {kind}\r\n{extra}\r\n").encode()


def _stream(sock: socket.socket, total: int) -> int:
    """Send a chunked body of `total` bytes in 1 MiB chunks until the daemon stops reading:
    the bytes that went out."""
    chunk = b"%x\r\n%s\r\n" % (MiB, b"1" * MiB)
    sent = 0
    while sent < total and _send(sock, chunk):
        sent += MiB
    _send(sock, b"0\r\n\r\n")
    return sent


def _send(sock: socket.socket, data: bytes) -> bool:
    """Whether `data` went out; False once the daemon has stopped reading and closed."""
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def test_a_body_said_to_be_too_large_is_refused_before_it_is_read(daemon: Herd) -> None:
    size = 300 * 1000 * 1000
    with _raw(daemon) as sock:
        # Only the head and a little of the body: an answer means none of the rest was awaited.
        sock.sendall(_head("/api/v1/jobs", f"Content-Length: {size}\r\n") + b'{"jobs": [')
        status, body = _answer(sock)
    assert status == 413
    assert json.loads(body) == {
        "error": "the request body is 286.1 MiB, over the daemon's limit of 128 MiB: "
        "submit the jobs in smaller batches"
    }
    assert "no jobs" in daemon.cli("ls").stdout  # still answering, and nothing submitted


def test_a_streamed_body_is_cut_off_at_the_cap(daemon: Herd) -> None:
    with _raw(daemon) as sock:
        sock.sendall(_head("/api/v1/jobs", "Transfer-Encoding: chunked\r\n"))
        sent = _stream(sock, 2 * MAX_BODY_BYTES)
        status, body = _answer(sock)
    assert status == 413
    assert json.loads(body)["error"] == (
        "the request body is over the daemon's limit of 128 MiB: submit the jobs in smaller batches"
    )
    assert sent < MAX_BODY_BYTES + SLACK, f"{sent / MiB:.0f} MiB went out before the cut"
    assert "no jobs" in daemon.cli("ls").stdout
    assert "Traceback" not in (daemon.home / "daemon.log").read_text()


def test_the_cap_holds_over_tcp_for_a_client_with_the_token(herd: Herd) -> None:
    herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
    url = urlsplit(herd.cli("ui", "--url").stdout.strip())
    token = parse_qs(url.query)["token"][0]
    with socket.create_connection(("127.0.0.1", url.port or 0), timeout=30) as sock:
        extra = f"Authorization: token {token}\r\nContent-Length: {400 * MiB}\r\n"
        sock.sendall(_head("/api/v1/jobs", extra, host="127.0.0.1") + b'{"jobs": [')
        status, body = _answer(sock)
    assert status == 413
    assert json.loads(body)["error"].startswith("the request body is 400.0 MiB, over the daemon's")


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_dashboard_form_is_capped_too(daemon: Herd, chunked: bool) -> None:
    form = "_=" + "x" * (2 * MAX_FORM_BYTES)
    kind = "application/x-www-form-urlencoded"
    with _raw(daemon) as sock:
        if chunked:
            sock.sendall(_head("/ui/queue/pause", "Transfer-Encoding: chunked\r\n", kind))
            _stream(sock, len(form))
        else:
            head = _head("/ui/queue/pause", f"Content-Length: {len(form)}\r\n", kind)
            _send(sock, head + form.encode())
        status, body = _answer(sock)
    assert status == 413
    assert body.endswith("the form is over the daemon's limit of 1 MiB: send less at once\n") or (
        "the form is 2.0 MiB, over the daemon's limit of 1 MiB: send less at once" in body
    )
    assert daemon.client.get("/daemon")["queue_paused"] is False  # the cut-off form did nothing


def test_the_cli_refuses_a_job_file_over_the_cap_in_one_line(daemon: Herd, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    line = "echo " + "x" * 120_000 + "\n"  # a long but valid command
    jobs.write_text(line * (MAX_BODY_BYTES // len(line) + 1))
    proc = daemon.cli("submit", "--file", str(jobs), check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("gpuherd: error: the request body is 128.")
    assert proc.stderr.endswith(
        "over the daemon's limit of 128 MiB: submit the jobs in smaller batches\n"
    )
    assert len(proc.stderr.splitlines()) == 1
    assert "no jobs" in daemon.cli("ls").stdout


def test_the_client_reads_the_daemons_refusal_while_it_sends(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon with a lower cap (another version) answers 413 and stops reading midway: the
    client shows its line, not a broken pipe."""
    monkeypatch.setattr(gpuherd.client, "MAX_BODY_BYTES", 4 * MAX_BODY_BYTES)
    body = {"jobs": [], "env": {"BIG": "x" * (MAX_BODY_BYTES + MiB)}}
    with pytest.raises(HerdError) as refused:
        daemon.client.post("/jobs", body)
    assert str(refused.value) == (
        "the request body is 129.0 MiB, over the daemon's limit of 128 MiB: "
        "submit the jobs in smaller batches"
    )
