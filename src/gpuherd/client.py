"""A small client for the daemon's Unix socket, on the standard library only (fast to import).

Used by the CLI and the Python API. Errors come back as HerdError with the daemon's one line.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from gpuherd import paths
from gpuherd.errors import Conflict, DaemonError, HerdError, NotFound

_STATUS_ERRORS: dict[int, type[HerdError]] = {404: NotFound, 409: Conflict}


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if self.timeout is not None:
                sock.settimeout(self.timeout)
            sock.connect(str(self._path))
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class Client:
    def __init__(self, home: str | Path | None = None, timeout: float | None = 60.0) -> None:
        self.home = paths.home_dir(home)
        self.socket_path = paths.socket_path(self.home)
        self.timeout = timeout

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", _with_query(path, query))

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, {} if body is None else body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def request(self, method: str, path: str, body: Any = None, raw: bool = False) -> Any:
        conn = self._connect()
        try:
            payload = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if payload is not None else {}
            conn.request(method, "/api/v1" + path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except TimeoutError:
            raise DaemonError(f"the daemon did not answer within {self.timeout:g}s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise DaemonError(f"lost the connection to the daemon: {exc!r}") from None
        finally:
            conn.close()
        if response.status >= 400:
            raise _error(response.status, data)
        if raw:
            return data.decode(errors="replace")
        return json.loads(data) if data else None

    def stream(self, path: str, **query: Any) -> Iterator[tuple[str, Any]]:
        """Server-sent events from `path` as (event name, decoded JSON data) pairs."""
        conn = self._connect(timeout=None)
        try:
            conn.request("GET", "/api/v1" + _with_query(path, query))
            response = conn.getresponse()
            if response.status >= 400:
                raise _error(response.status, response.read())
            event, data = "message", ""
            while True:
                line = response.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text.startswith("event:"):
                    event = text[6:].strip()
                elif text.startswith("data:"):
                    data += text[5:].strip()
                elif not text and data:
                    yield event, json.loads(data)
                    event, data = "message", ""
        finally:
            conn.close()

    def is_up(self) -> bool:
        try:
            self.get("/daemon")
        except DaemonError:
            return False
        return True

    def _connect(self, timeout: float | None = -1.0) -> _UnixConnection:
        conn = _UnixConnection(self.socket_path, self.timeout if timeout == -1.0 else timeout)
        try:
            conn.connect()
        except (FileNotFoundError, ConnectionRefusedError):
            raise DaemonError(
                f"no gpuherd daemon is running for {self.home}: start one with "
                "`gpuherd daemon start` (add --fake-gpus 4 on a machine without GPUs)"
            ) from None
        except PermissionError:
            raise DaemonError(
                f"permission denied on {self.socket_path}: the daemon belongs to another user"
            ) from None
        return conn


def _with_query(path: str, query: dict[str, Any]) -> str:
    pairs = [(k, v) for k, v in query.items() if v is not None]
    expanded = [(k, x) for k, v in pairs for x in (v if isinstance(v, list | tuple) else [v])]
    cleaned = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in expanded]
    return path + ("?" + urlencode(cleaned) if cleaned else "")


def _error(status: int, data: bytes) -> HerdError:
    try:
        message = str(json.loads(data)["error"])
    except (ValueError, KeyError, TypeError):
        message = data.decode(errors="replace").strip() or f"HTTP {status}"
    error = _STATUS_ERRORS.get(status, HerdError)(message)
    return error
