"""The bits of HTTP/1.1 the daemon's client speaks on its Unix socket (a part of client.py):
a request out, an answer's head read at once and its body in pieces as it arrives (chunked,
of a Content-Length, or up to the end), anything else refused as BadResponse.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from io import BufferedReader
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

from gpuherd import __version__
from gpuherd.errors import HerdError, refusal
from gpuherd.home_header import HEADER as HOME_HEADER
from gpuherd.home_header import header_value
from gpuherd.typed_name import prefixed

_MAX_LINE = 65536  # a status, header or chunk-size line; longer means a broken answer
_MAX_HEADERS = 100
_HEX = b"0123456789abcdefABCDEF"


class BadResponse(Exception):
    """The daemon's answer is not the HTTP we expect: cut off or garbled."""


class CutOff(BadResponse):
    """The answer ended before it was whole: the daemon closed the connection, as one that
    goes away (a stop, a crash) mid-answer does. A garbled answer is a plain BadResponse."""


class Sender(Protocol):
    """What sends a request: the socket, or client_wait's sliced wait on it."""

    def sendall(self, data: bytes, /) -> None: ...


def send(sock: Sender, method: str, path: str, payload: bytes | None, home: Path) -> None:
    """Send a request for the daemon of `home`: the daemon of another home refuses it, and
    does nothing of it (home_header.py)."""
    head = f"{method} /api/v1{path} HTTP/1.1\r\nHost: gpuherd\r\nConnection: close\r\n"
    head += f"{ZONE_HEADER}: {zone()}\r\n{HOME_HEADER}: {header_value(home)}\r\n"
    if payload is not None:
        head += "Content-Type: application/json\r\n"
    body = payload or b""
    sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)


ZONE_HEADER = "Gpuherd-Zone"
"""This process's time zone, in which the daemon says the moments of its answer (`retrying at
23:30`): `OFFSET [TZ]`, its offset from UTC now in seconds and the TZ variable if set
(api/askers_zone.py)."""


def zone() -> str:
    """ZONE_HEADER's value, read at each request (a fork of a process whose TZ changed)."""
    offset = time.localtime().tm_gmtoff
    name = os.environ.get("TZ", "").lstrip(":")
    return f"{offset} {name}" if name.isprintable() and name.isascii() and name else str(offset)


def send_and_answer(
    sock: Sender, file: BufferedReader, method: str, path: str, payload: bytes | None, home: Path
) -> Response:
    """Send a request (`send`) and read its answer's head. A daemon that refuses a body (413,
    or 421 of another home) answers and closes before it has read it all: the answer is still
    there to read."""
    try:
        send(sock, method, path, payload, home)
    except (BrokenPipeError, ConnectionResetError) as exc:
        try:
            return Response(file)
        except (OSError, BadResponse):
            raise exc from None  # no answer: the connection was lost, as the send said
    return Response(file)


class Response:
    """The status and headers of an answer, read at once; the body, read on demand."""

    def __init__(self, file: BufferedReader) -> None:
        self._file = file
        status_line = file.readline(_MAX_LINE)
        if not status_line:
            raise CutOff("the daemon closed the connection without answering")
        parts = _complete(status_line).split(None, 2)  # b"HTTP/1.1", b"200", b"OK"
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise BadResponse(f"not an HTTP status line: {status_line[:80]!r}")
        self.status = int(parts[1])
        self.headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            line = self._line()
            if not line.strip():
                break
            name, _, value = line.decode("latin-1").partition(":")
            self.headers[name.strip().lower()] = value.strip()
        else:
            raise BadResponse(f"more than {_MAX_HEADERS} header lines")
        _note_version(self.headers.get("gpuherd-version"), self._from_the_app())

    def _from_the_app(self) -> bool:
        """Whether the daemon's app gave this answer, so that it would name its version if it
        could: a success, or a refusal in JSON (the 422 of an older daemon that knows no new
        option). uvicorn's own answers (a request it could not parse: text) and the 5xx of a
        failure the app let escape never pass through what adds the header."""
        json_body = self.headers.get("content-type", "").startswith("application/json")
        return 200 <= self.status < 300 or (self.status < 500 and json_body)

    def read(self) -> bytes:
        return b"".join(self.pieces())

    def lines(self) -> Iterator[bytes]:
        """The body's lines, without their newline, as they arrive."""
        pending = b""
        for piece in self.pieces():
            *complete, pending = (pending + piece).split(b"\n")
            yield from complete
        if pending:
            yield pending

    def pieces(self) -> Iterator[bytes]:
        """The body in pieces as they arrive: chunked, of a Content-Length, or up to the end."""
        if self.headers.get("transfer-encoding", "").lower().endswith("chunked"):
            while size := self._chunk_size():
                yield from self._exactly(size)
                if self._line().strip():
                    raise BadResponse("a chunk is longer than its size says")
            while self._line().strip():
                pass  # trailer fields: nothing here needs them
        elif "content-length" in self.headers:
            length = self.headers["content-length"]
            if not (length.isascii() and length.isdigit()):
                raise BadResponse(f"bad Content-Length: {length[:40]!r}")
            yield from self._exactly(int(length))
        else:  # neither: the body runs until the daemon closes the connection
            while data := self._file.read1(_MAX_LINE):
                yield data

    def _exactly(self, size: int) -> Iterator[bytes]:
        """`size` bytes, in pieces as they arrive (a huge bogus size allocates nothing)."""
        while size > 0:
            data = self._file.read1(min(size, _MAX_LINE))
            if not data:
                raise CutOff("the answer stopped in the middle of its body")
            size -= len(data)
            yield data

    def _chunk_size(self) -> int:
        line = self._line()
        size = line.split(b";", 1)[0].strip()  # ";name=value" chunk extensions: ignored
        if not size or size.strip(_HEX):
            raise BadResponse(f"bad chunk size line: {line[:40]!r}")
        return int(size, 16)

    def _line(self) -> bytes:
        return _complete(self._file.readline(_MAX_LINE))


_versions_told: set[str] = set()
_replacing = False
"""Set while `daemon stop` or `restart` talks to the daemon it ends (`replacing`)."""


@contextmanager
def replacing() -> Iterator[None]:
    """Within: a daemon of another version is not told of. `daemon restart` and `stop`,
    talking to the daemon they are about to end, warned that it ran another version and to
    restart it."""
    global _replacing
    _replacing = True
    try:
        yield
    finally:
        _replacing = False


UNNAMED = ""
"""The version of a daemon whose answer names none: a gpuherd 0.1.0 of before the header."""


def _note_version(theirs: str | None, from_the_app: bool) -> None:
    """Say once per process that the daemon runs another gpuherd (upgraded, not restarted):
    new options may be ignored by it, new answers missing. The first 0.1.0 daemons name no
    version: an upgrade that left one running was not told at all."""
    if _replacing:
        return
    if theirs is None and from_the_app:
        theirs = UNNAMED
    if theirs is not None and theirs != __version__ and theirs not in _versions_told:
        _versions_told.add(theirs)
        which = f"gpuherd {theirs}" if theirs else "an older gpuherd, which names no version,"
        # In the name typed, as the CLI's other warnings (`herd: warning: ...`); a Python
        # program's argv[0] is no script's name, so there it says `gpuherd: warning:`.
        warning = (
            f"the daemon runs {which} and this is {__version__}: restart it to run "
            "this version (`gpuherd daemon restart`: running jobs go on)"
        )
        sys.stderr.write(prefixed("warning", warning) + "\n")


def _complete(line: bytes) -> bytes:
    """`line` if it ends with its newline; a cut-off answer or an over-long line otherwise."""
    if line.endswith(b"\n"):
        return line
    if len(line) >= _MAX_LINE:
        raise BadResponse(f"a line longer than {_MAX_LINE} bytes in the answer")
    raise CutOff("the answer stopped in the middle")


def with_query(path: str, query: dict[str, Any]) -> str:
    """`path` with `query`'s values (None: left out; a list: each one; a flag: true/false)."""
    pairs = [(k, v) for k, v in query.items() if v is not None]
    expanded = [(k, x) for k, v in pairs for x in (v if isinstance(v, list | tuple) else [v])]
    cleaned = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in expanded]
    return path + ("?" + urlencode(cleaned) if cleaned else "")


def error_of(status: int, data: bytes) -> HerdError:
    """The HerdError of an answer of `status` >= 400 (body `data`), with the daemon's line."""
    try:
        message = str(json.loads(data)["error"])
    except (ValueError, KeyError, TypeError):
        message = data.decode(errors="replace").strip() or f"HTTP {status}"
    return refusal(status, message)
