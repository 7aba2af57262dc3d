"""The optional TCP listener: a second uvicorn server, inside the daemon, on the same app.

Off by default. `gpuherd daemon start --listen ADDR` starts it with the daemon; `gpuherd ui`
starts it later through `POST /api/v1/daemon/listen` on the Unix socket. Requests over TCP go
through `TcpGate` (auth.py); the Unix socket serves the bare app. The token is written 0600 to
GPUHERD_HOME/ui_token once the listener is up, and kept there through daemon stops: the next
daemon takes it again (`kept_token`), so a `daemon restart` leaves the open dashboard tabs
logged in. GPUHERD_TOKEN in the daemon's environment wins over it; `gpuherd ui --new-token`
makes a new one, and `gpuherd ui --stop` forgets it (the next listener has a new one).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from gpuherd.api.auth import TCP_SCOPE_KEY, HostCheck, TcpGate
from gpuherd.api.open_codes import OneTimeCodes
from gpuherd.api.routes import RouteTable
from gpuherd.api.token_file import fresh_token, kept_token, token_path, write_token
from gpuherd.env_token import env_token
from gpuherd.errors import Conflict, HerdError
from gpuherd.listen_address import every_interface, format_address, parse_address
from gpuherd.saved_settings import keep_listen
from gpuherd.wire import REFUSE_UNKNOWN_FIELDS, Bool

log = logging.getLogger("gpuherd.listener")

DEFAULT_ADDRESS = "127.0.0.1:8888"
NEXT_FREE_TRIES = 10
"""`gpuherd ui` without --listen tries this many ports from 8888 up, as Jupyter does."""
LISTEN_BACKLOG = 128
"""Connections waiting to be accepted, at most; asyncio accepts up to this many at once,
before the cap on open ones (connections.py) can close any."""

routes = RouteTable()


def bind(address: str, next_free: int = 1) -> socket.socket:
    """A listening TCP socket on `address`; with `next_free` > 1 try the ports above if taken."""
    host, port = parse_address(address)
    last: OSError | None = None
    for candidate in range(port, port + max(1, next_free)) if port else [0]:
        try:
            return _bind_one(host, candidate)
        except OSError as exc:
            last = exc
    reason = last.strerror if last is not None and last.strerror else str(last)
    tried = f"{address} to {port + next_free - 1}" if port and next_free > 1 else address
    said = f"cannot listen on {tried}: {reason}"
    if last is not None and last.errno == errno.EADDRNOTAVAIL:
        raise NotHere(said, port)
    taken = last is not None and last.errno == errno.EADDRINUSE
    raise (PortTaken if taken else HerdError)(said)


class PortTaken(HerdError):
    """The address is another socket's (the way out differs from a host that is not this
    machine's, or a port below 1024)."""


class NotHere(HerdError):
    """The host is no address of this machine (EADDRNOTAVAIL: a typo, another machine's, or
    this one's before its network changed): "Cannot assign requested address" alone left
    the user to guess which address would do."""

    def __init__(self, said: str, port: int) -> None:
        self.said, self.port = said, port
        super().__init__(
            f"{said} (no address of this machine): give one of its own, {self.choices}"
        )

    @property
    def choices(self) -> str:
        return (
            f"--listen 127.0.0.1:{self.port} (this machine only) or --listen"
            f" 0.0.0.0:{self.port} (every interface)"
        )


def _bind_one(host: str, port: int) -> socket.socket:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


class Listener:
    """At most one TCP server at a time, sharing the daemon's loop, app and engine."""

    def __init__(self, app: FastAPI, home: Path) -> None:
        self.app = app
        self.home = home
        # A GPUHERD_TOKEN that is no token is refused as the listener starts (start).
        self.token = os.environ.get("GPUHERD_TOKEN") or kept_token(home) or fresh_token()
        self.host = ""
        self.port = 0
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._fqdn: str | None = None
        self._gate: TcpGate | None = None
        self.codes = OneTimeCodes()

    @property
    def listening(self) -> bool:
        return self._task is not None and not self._task.done()

    def url(self, host: str | None = None, query: str | None = None) -> str | None:
        """The dashboard's URL with the token (or `query`); for a wildcard address, the
        local one."""
        if not self.listening:
            return None
        host = host or self.host.strip("[]")
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
        return f"http://{format_address(shown, self.port)}/?{query or 'token=' + self.token}"

    def describe(self) -> dict[str, Any]:
        return {
            "listening": self.listening,
            "address": format_address(self.host, self.port) if self.listening else None,
            "url": self.url(),
            "remote_url": self.url(self._fqdn) if self._fqdn else None,
            "token_file": str(token_path(self.home)) if self.listening else None,
        }

    async def start(self, sock: socket.socket, host: str) -> None:
        import uvicorn

        from gpuherd.api.connections import GuardedH11
        from gpuherd.api.server import quiet_server_class

        try:
            env_token()  # (`daemon start` checked it; not a daemon started otherwise)
        except HerdError:
            sock.close()
            raise
        self.host, self.port = host, int(sock.getsockname()[1])
        self._fqdn = _machine_name() if every_interface(host) else None  # once: may ask DNS
        try:
            write_token(self.home, self.token)
        except HerdError:
            sock.close()  # (not left bound: the next `gpuherd ui` takes the same port)
            raise
        self._gate = gate = TcpGate(self.app, self.token, HostCheck(host), self.codes)
        config = uvicorn.Config(
            gate,
            log_level="warning",
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=2,
            http=GuardedH11,  # a deadline for each request, a cap on connections
            backlog=LISTEN_BACKLOG,  # (uvicorn's 2048 is also how many it accepts at once)
        )
        server = quiet_server_class()(config)
        config.load()  # what Server.serve() does before startup(), without taking the signals
        server.lifespan = config.lifespan_class(config)
        await server.startup(sockets=[sock])
        self._server = server
        self._task = asyncio.create_task(self._run(server, sock))
        log.info("dashboard listening on %s", format_address(self.host, self.port))

    async def _run(self, server: Any, sock: socket.socket) -> None:
        """uvicorn's main loop, until stop() (the daemon calls it once its main server ends)."""
        try:
            await server.main_loop()
        finally:
            await server.shutdown(sockets=[sock])

    async def stop(self, forget_token: bool = False) -> None:
        """Stop the TCP server; `forget_token` (`gpuherd ui --stop`): also remove the token
        file and make a new token, for the next listener. A daemon that stops keeps both."""
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._server, self._task, self._gate = None, None, None
        if forget_token:
            token_path(self.home).unlink(missing_ok=True)
            self.token = os.environ.get("GPUHERD_TOKEN") or fresh_token()

    def new_token(self) -> None:
        """`gpuherd ui --new-token`: a new token, in force at once. Every browser and script
        of the old one is refused from now on, its open event streams too (their connections
        are closed: a stream checked its token as it opened, and would go on)."""
        if os.environ.get("GPUHERD_TOKEN"):
            raise Conflict(
                "the dashboard's token is GPUHERD_TOKEN, from the daemon's environment: "
                "change it there, then `gpuherd daemon restart`"
            )
        token = fresh_token()
        if self._gate is None or self._server is None:
            self.token = token
            return  # (written as the listener starts)
        write_token(self.home, token)  # first: one refused leaves the old token in force
        self.token = token
        self._gate.use_token(self.token)
        for connection in list(self._server.server_state.connections):
            connection.transport.close()


def _machine_name() -> str | None:
    """The name other machines may know this one by (None if it only knows 'localhost')."""
    for name in (socket.getfqdn(), socket.gethostname()):
        if name and not name.startswith("localhost"):
            return name
    return None


@dataclass
class ListenRequest:
    __pydantic_config__ = REFUSE_UNKNOWN_FIELDS

    address: str | None = None
    """HOST:PORT to listen on; None = the default, trying the next ports if it is taken."""
    stop: Bool = False
    new_token: Bool = False
    """Make a new token first (`gpuherd ui --new-token`): the old one is refused from now on."""


def _listener(request: Request) -> Listener:
    listener: Listener = request.app.state.listener
    return listener


def _refuse_tcp(request: Request) -> JSONResponse | None:
    if request.scope.get(TCP_SCOPE_KEY):
        return JSONResponse(
            {"error": "the listener is managed from the machine itself: `gpuherd ui`"},
            status_code=403,
        )
    return None


@routes.get("/daemon/listen", response_model=None)
async def listen_status(request: Request) -> dict[str, Any] | JSONResponse:
    return _refuse_tcp(request) or _listener(request).describe()


@routes.post("/daemon/listen", response_model=None)
async def listen(request: Request, body: ListenRequest) -> dict[str, Any] | JSONResponse:
    """Start (or with `stop`, stop) the TCP listener; only over the Unix socket."""
    refused = _refuse_tcp(request)
    if refused is not None:
        return refused
    listener = _listener(request)
    if body.stop:
        await listener.stop(forget_token=True)
        return _kept(request, listener)
    if body.new_token:
        listener.new_token()
    if listener.listening:
        if body.address is None or _same(body.address, listener.host, listener.port):
            return listener.describe()
        raise Conflict(
            f"already listening on {format_address(listener.host, listener.port)}: "
            "`gpuherd ui --stop` first"
        )
    address = body.address or DEFAULT_ADDRESS
    host = parse_address(address)[0]
    try:
        sock = bind(address, 1 if body.address else NEXT_FREE_TRIES)
    except PortTaken as exc:  # the way out, as `daemon start --listen` says it (daemon_home)
        free = f"`gpuherd ui --listen {format_address(host, 0)}` takes a free one"
        if body.address:
            raise PortTaken(f"{exc}: free that port, or give another address ({free})") from None
        raise PortTaken(f"{exc}: free one of those ports, or {free}") from None
    await listener.start(sock, host)
    return _kept(request, listener)


def _kept(request: Request, listener: Listener) -> dict[str, Any]:
    """The listener as a POST left it, its address saved for a `daemon restart` after a
    crash (saved_settings.keep_listen); `not_saved`: why it could not be, for `gpuherd ui` to
    say (the listener is changed all the same)."""
    answer = listener.describe()
    not_saved = keep_listen(request.app.state.service.store, answer["address"])
    return answer if not_saved is None else {**answer, "not_saved": not_saved}


@routes.post("/daemon/listen/code", response_model=None)
async def one_time_url(request: Request) -> dict[str, Any] | JSONResponse:
    """The local URL with a one-time code in place of the token, for `gpuherd ui --open` to
    put on a browser's command line (open_codes.py); only over the Unix socket."""
    refused = _refuse_tcp(request)
    if refused is not None:
        return refused
    listener = _listener(request)
    if not listener.listening:
        raise Conflict("the daemon is not listening on TCP: `gpuherd ui` starts the dashboard")
    return {"url": listener.url(query=f"code={listener.codes.issue()}")}


def _same(address: str, host: str, port: int) -> bool:
    want_host, want_port = parse_address(address)
    return want_port in (0, port) and _norm(want_host) == _norm(host)


def _norm(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return host.lower()
