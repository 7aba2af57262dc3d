"""A relay between a client and a test's daemon, on a socket of its own (GPUHERD_SOCKET):
each request passed on and its line noted; with `older`, answering as a daemon from before
`POST /jobs/wait` and `/jobs/wait`'s `endings`: the POST refused as that daemon's
`/jobs/{action}` refused it (422, its field `timeout` unknown), the GET's answer without
`endings`."""

from __future__ import annotations

import json
import re
import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import Herd
from gpuherd import __version__

OLDER_REFUSAL = b"invalid request: timeout: unknown field (misspelt?)"
"""What a daemon from before `POST /jobs/wait` answers it (its `/jobs/{action}` takes it)."""


class _Relay(socketserver.StreamRequestHandler):
    """One request (one a connection: the client says `Connection: close`)."""

    server: _RelayServer

    def handle(self) -> None:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += self.rfile.readline()
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        request = head + self.rfile.read(int(length[1]) if length else 0)
        line = head.split(b"\r\n", 1)[0].decode()
        self.server.requests.append(line)
        if self.server.older and line.startswith("POST /api/v1/jobs/wait "):
            self.wfile.write(
                _answer(b"422 Unprocessable Entity", b'{"error": "%s"}' % OLDER_REFUSAL)
            )
            return
        with socket.socket(socket.AF_UNIX) as daemon:
            daemon.connect(self.server.daemon_socket)
            daemon.sendall(request)
            answer = b"".join(iter(lambda: daemon.recv(65536), b""))
        if self.server.older and line.startswith("GET /api/v1/jobs/wait?"):
            top, body = answer.split(b"\r\n\r\n", 1)
            data = json.loads(body)
            del data["endings"]
            body = json.dumps(data).encode()
            top = re.sub(rb"(?i)content-length: *\d+", b"content-length: %d" % len(body), top)
            answer = top + b"\r\n\r\n" + body
        self.wfile.write(answer)


def _answer(status: bytes, body: bytes) -> bytes:
    # Named as that daemon's answers were (by its version, this one's): an answer that names
    # none is of a daemon older still, which the client warns of.
    return (
        b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"gpuherd-version: %s\r\nconnection: close\r\n\r\n%s"
        % (status, len(body), __version__.encode(), body)
    )


class _RelayServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    requests: list[str]
    daemon_socket: str
    older: bool


@contextmanager
def relayed(herd: Herd, folder: Path, older: bool) -> Iterator[tuple[dict[str, str], list[str]]]:
    """An environment whose clients reach the daemon through a relay (GPUHERD_SOCKET), and
    the request lines the relay passed on, as they come."""
    path = folder / "relay.sock"
    server = _RelayServer(str(path), _Relay)
    server.requests, server.older = [], older
    server.daemon_socket = (herd.home / "daemon.socket").read_text().splitlines()[0]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {**herd.env, "GPUHERD_SOCKET": str(path)}, server.requests
    finally:
        server.shutdown()
        server.server_close()
        path.unlink()
