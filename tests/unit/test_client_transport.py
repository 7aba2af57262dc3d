"""The client's own HTTP/1.1 on the Unix socket, against a fake daemon that sends canned bytes."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gpuherd import __version__, client_http
from gpuherd.client import Client
from gpuherd.errors import Conflict, DaemonError, HerdError, NotFound

WAIT = 10.0  # seconds: the longest any side waits for the other before giving up

Answer = Callable[[socket.socket], None]


class FakeDaemon:
    """Serves one connection per `answer`: reads the whole request, then lets `answer` reply."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[bytes] = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(4)
        self.listener.settimeout(WAIT)
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def client(self, answer: Answer, timeout: float = WAIT) -> Client:
        thread = threading.Thread(target=self._serve, args=(answer,), daemon=True)
        thread.start()
        self.threads.append(thread)
        client = Client(self.path.parent, timeout=timeout)
        client.socket_path = self.path
        return client

    def _serve(self, answer: Answer) -> None:
        try:
            conn, _ = self.listener.accept()
            with conn:
                conn.settimeout(WAIT)
                self.requests.append(read_request(conn))
                answer(conn)
        except BaseException as exc:  # reported by the fixture, not lost in the thread
            self.errors.append(exc)

    def close(self) -> None:
        for thread in self.threads:
            thread.join(timeout=WAIT)
        self.listener.close()
        assert not self.errors, self.errors


def read_request(conn: socket.socket) -> bytes:
    """One request: its head and the body its Content-Length announces."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"the client hung up mid-request: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(65536)
    return data


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[FakeDaemon]:
    fake = FakeDaemon(tmp_path / "s.sock")
    yield fake
    fake.close()


def send(*parts: bytes) -> Answer:
    """An answer sent in several writes (a parser must not care where the reads split)."""

    def answer(conn: socket.socket) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
            for part in parts:
                conn.sendall(part)

    return answer


def json_answer(status: str, body: bytes) -> Answer:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
    return send(f"{head}Content-Length: {len(body)}\r\n\r\n".encode(), body)


def lost(excinfo: pytest.ExceptionInfo[DaemonError]) -> str:
    message = str(excinfo.value)
    assert message.startswith("lost the connection to the daemon: "), message
    assert "\n" not in message
    return message


def test_a_content_length_body(daemon: FakeDaemon) -> None:
    client = daemon.client(json_answer("200 OK", b'{"ids": [1, 2]}'))
    assert client.post("/jobs", {"jobs": []}) == {"ids": [1, 2]}
    head, _, body = daemon.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /api/v1/jobs HTTP/1.1"
    assert {b"Host: gpuherd", b"Connection: close", b"Content-Type: application/json"} <= set(lines)
    assert b"Content-Length: %d" % len(body) in lines
    assert body == b'{"jobs": []}'


def test_a_get_has_no_body_and_its_query(daemon: FakeDaemon) -> None:
    client = daemon.client(json_answer("200 OK", b'{"jobs": []}'))
    assert client.get("/jobs", all=True, ids=[1, 2], limit=None) == {"jobs": []}
    head = daemon.requests[0].split(b"\r\n")
    assert head[0] == b"GET /api/v1/jobs?all=true&ids=1&ids=2 HTTP/1.1"
    assert b"Content-Length: 0" in head
    assert not any(line.startswith(b"Content-Type") for line in head)


def test_a_chunked_body_split_across_sends(daemon: FakeDaemon) -> None:
    client = daemon.client(
        send(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
            b"5\r\n",
            b'{"ok"',
            b"\r\n7;name=value\r\n: tru",  # a chunk extension, ignored
            b"e}\r\n0\r\nX-Trailer: ignored\r\n\r\n",
        )
    )
    assert client.get("/daemon") == {"ok": True}


def test_a_body_that_runs_to_the_end_of_the_connection(daemon: FakeDaemon) -> None:
    client = daemon.client(send(b"HTTP/1.1 200 OK\r\n\r\nline one\n", b"line two\n"))
    assert client.request("GET", "/jobs/1/log", raw=True) == "line one\nline two\n"


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        ("404 Not Found", b'{"error": "no job 7"}', NotFound, "no job 7"),
        ("409 Conflict", b'{"error": "job 7 is running"}', Conflict, "job 7 is running"),
        ("500 Internal Server Error", b"Internal Server Error", HerdError, "Internal Server Error"),
        ("400 Bad Request", b"", HerdError, "HTTP 400"),
    ],
)
def test_an_error_status_raises_its_herd_error(
    daemon: FakeDaemon, status: str, body: bytes, kind: type[HerdError], message: str
) -> None:
    client = daemon.client(json_answer(status, body))
    with pytest.raises(HerdError) as excinfo:
        client.get("/jobs/7")
    assert type(excinfo.value) is kind
    assert str(excinfo.value) == message


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (send(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"), "not an HTTP status line"),
        (send(b"HTTP/1.1 OK\r\n\r\n"), "not an HTTP status line"),
        (send(b""), "closed the connection without answering"),
        (send(b"HTTP/1.1 200 OK\r\nContent-Le"), "stopped in the middle"),
        (send(b'HTTP/1.1 200 OK\r\nContent-Length: 34\r\n\r\n{"ids"'), "in the middle of its body"),
        (send(b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\n{}"), "bad Content-Length"),
        (send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), "bad chunk size"),
        (send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n"), "bad chunk size"),
        (send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{}"), "in the middle"),
        (
            send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"),
            "in the middle",
        ),
        (send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n"), "longer than"),
        (send(b"HTTP/1.1 200 OK\r\n" + b"x" * 70_000), "longer than 65536 bytes"),
    ],
)
def test_a_broken_answer_is_one_daemon_error_line(
    daemon: FakeDaemon, answer: Answer, detail: str
) -> None:
    client = daemon.client(answer)
    with pytest.raises(DaemonError) as excinfo:
        client.get("/jobs")
    said, cause = lost(excinfo), excinfo.value.__cause__
    assert isinstance(cause, client_http.BadResponse)
    assert detail in str(cause)  # (kept as the cause)
    if isinstance(cause, client_http.CutOff):  # the daemon went away: gpuherd's sentence
        assert "it went away before it answered" in said and detail not in said
    else:  # garbled: what is wrong with it
        assert detail in said


def test_a_silent_daemon_times_out(daemon: FakeDaemon) -> None:
    done = threading.Event()

    def silence(conn: socket.socket) -> None:
        done.wait(WAIT)

    client = daemon.client(silence, timeout=0.2)
    try:
        with pytest.raises(DaemonError, match=r"^the daemon did not answer within 0.2s$"):
            client.get("/daemon")
    finally:
        done.set()


def test_no_daemon(tmp_path: Path) -> None:
    client = Client(tmp_path)
    client.socket_path = tmp_path / "missing.sock"
    with pytest.raises(DaemonError, match="no gpuherd daemon is running for"):
        client.get("/daemon")
    assert not client.is_up()


def test_a_stream_yields_each_event_as_it_arrives(daemon: FakeDaemon) -> None:
    """The daemon sends the second event only once the client has the first: a client that
    waited for the whole body would get a connection cut in the middle instead."""
    first_seen = threading.Event()

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
        conn.sendall(b"Transfer-Encoding: chunked\r\n\r\n")
        one = b'retry: 2000\r\n\r\nevent: stdout\r\ndata: {"text": "one\\n"}\r\n\r\n'
        conn.sendall(b"%x\r\n%s\r\n" % (len(one), one))
        if not first_seen.wait(WAIT):
            return  # hang up mid-body: the client fails
        two = b'event: end\ndata: {"exit": 0}\n\n'
        conn.sendall(b"%x\r\n%s\r\n" % (len(two) - 5, two[:-5]))  # an event over two chunks
        conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (5, two[-5:]))

    events = daemon.client(answer).stream("/jobs/1/log/follow", stream="stdout")
    assert next(events) == ("stdout", {"text": "one\n"})
    first_seen.set()
    assert list(events) == [("end", {"exit": 0})]
    assert daemon.requests[0].startswith(
        b"GET /api/v1/jobs/1/log/follow?stream=stdout HTTP/1.1\r\n"
    )


def test_a_stream_to_the_end_of_the_connection(daemon: FakeDaemon) -> None:
    client = daemon.client(send(b"HTTP/1.1 200 OK\r\n\r\n", b"data: 1\n", b"\ndata: [2]\n\n"))
    assert list(client.stream("/events")) == [("message", 1), ("message", [2])]


def test_a_stream_error_status_and_a_cut_stream(daemon: FakeDaemon) -> None:
    client = daemon.client(json_answer("404 Not Found", b'{"error": "no job 9"}'))
    with pytest.raises(NotFound, match=r"^no job 9$"):
        next(client.stream("/jobs/9/log/follow"))
    cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\ndata: 1\n\n"
    events = daemon.client(send(cut)).stream("/events")
    assert next(events) == ("message", 1)
    with pytest.raises(DaemonError) as excinfo:
        next(events)
    assert "it went away before it answered" in lost(excinfo)
    assert "in the middle" in str(excinfo.value.__cause__)


def test_the_cli_never_imports_http_client() -> None:
    """http.client costs every CLI call ~12 ms of imports: the client must do without it."""
    code = "import sys, gpuherd.client; print('http.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_daemon_of_another_version_is_named_once(
    daemon: FakeDaemon, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `pip install -U`, the daemon still running is the old one until restarted."""
    monkeypatch.setattr(client_http, "_versions_told", set())
    ours = f"HTTP/1.1 200 OK\r\ngpuherd-version: {__version__}\r\nContent-Length: 2\r\n\r\n{{}}"
    daemon.client(send(ours.encode())).get("/daemon")
    assert capsys.readouterr().err == ""
    older = ours.replace(__version__, "0.0.1").encode()
    for _ in range(2):
        daemon.client(send(older)).get("/daemon")
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        f"gpuherd: warning: the daemon runs gpuherd 0.0.1 and this is {__version__}"
    )
    assert err.endswith(
        "restart it to run this version (`gpuherd daemon restart`: running jobs go on)\n"
    )
