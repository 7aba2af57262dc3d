"""The gate in front of the TCP listener: token, Host header and cross-site checks.

The Unix socket serves the app as it is: its file mode is the access control. The TCP
listener serves the same app wrapped in `TcpGate`, so every request that arrives over TCP
passes these checks, whatever its path; nothing depends on telling the two apart from the
ASGI scope. A refused request gets 403 and one line that says why.

- Host: only names that cannot come from DNS rebinding (IP literals, `localhost`, the
  listen name, and the machine's own names when listening on every interface).
- Token: `Authorization: token …` (or `Bearer …`), `?token=…`, a one-time `?code=…` that
  `gpuherd ui --open` opens (open_codes.py), or the cookie that a page visit with either
  sets (HttpOnly, SameSite=Strict), compared in constant time. The cookie holds a value
  derived from the token (`cookie_value`), not the token: browsers send a host's cookies to
  every port of that host, and what another server there receives must not be the token
  (the value is taken as this dashboard's cookie only, never as a token).
- Cross-site: a request that changes state (anything but GET, HEAD, OPTIONS) must not carry a
  foreign `Origin`; if its token came from the cookie (the only credential a browser adds on
  its own), its `Origin` or `Referer` must name this very host.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from urllib.parse import quote, urlencode, urlsplit

from starlette.datastructures import Headers, QueryParams

from gpuherd.api.limits import ASGIApp, Message, Receive, Scope, Send, answer_error
from gpuherd.api.open_codes import CodeRefused, OneTimeCodes
from gpuherd.listen_address import every_interface

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TCP_SCOPE_KEY = "gpuherd.tcp"
"""Set to True in the scope of every request that came through the gate (over TCP)."""
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class Refused(Exception):
    """A request the gate turns away: 403 with this one-line reason."""


def cookie_name(token: str) -> str:
    """One cookie per daemon: two daemons on one host (other ports, SSH tunnels) never clash."""
    return "gpuherd_" + hashlib.sha256(token.encode()).hexdigest()[:10]


COOKIE_LABEL = b"gpuherd dashboard cookie v1"


def cookie_value(token: str) -> str:
    """The dashboard cookie's value: an HMAC of a fixed label under the token. It cannot be
    turned back into the token, and the gate takes it only as the cookie, never as a token."""
    return hmac.new(token.encode(), COOKIE_LABEL, hashlib.sha256).hexdigest()


def hostname_of(host_header: str) -> str:
    """The name in a Host header, without port and brackets, lower case: '[::1]:80' -> '::1'."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """Which Host headers the listener accepts (against DNS rebinding).

    A rebinding attack makes a browser send the attacker's domain name, so IP literals are
    always safe, and so is `localhost`. Other names: the one given to --listen, and the
    machine's own names when listening on every interface. The port is not compared, so an
    SSH tunnel to another local port keeps working.
    """

    def __init__(self, listen_host: str, extra: frozenset[str] = frozenset()) -> None:
        names = {"localhost", *(n.lower() for n in extra)}
        host = listen_host.strip("[]").lower()
        if every_interface(host):
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        elif not _is_ip(host):
            names.add(host)
        self.names = frozenset(names)

    def allows(self, host_header: str) -> bool:
        name = hostname_of(host_header)
        return bool(name) and (_is_ip(name) or name in self.names)


class TcpGate:
    """ASGI middleware for the TCP listener; see the module's docstring for the rules."""

    def __init__(
        self, app: ASGIApp, token: str, hosts: HostCheck, codes: OneTimeCodes | None = None
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.codes = codes or OneTimeCodes()
        self.use_token(token)

    def use_token(self, token: str) -> None:
        """Take `token` from now on (`gpuherd ui --new-token`): the old one, and the cookie
        made from it, are refused."""
        self.token = token
        self.cookie = cookie_name(token)
        self.cookie_value = cookie_value(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the app has none; refuse rather than guess
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        query = QueryParams(scope.get("query_string", b""))
        try:
            source = self._check(scope, headers, query)
        except Refused as exc:
            await _refuse(scope, send, str(exc))
            return
        path: str = scope.get("path", "/")
        if (
            source in ("query", "code")
            and scope["method"] == "GET"
            and not path.startswith("/api/")
        ):
            await self._redirect_with_cookie(scope, send, query)
            return
        inner = dict(scope)
        inner[TCP_SCOPE_KEY] = True
        await self.app(inner, receive, with_headers(send, SECURITY_HEADERS))

    def _check(self, scope: Scope, headers: Headers, query: QueryParams) -> str:
        """Raise Refused, or answer where the (valid) token came from."""
        host = headers.get("host", "")
        if not self.hosts.allows(host):
            raise Refused(
                f"Host '{host}' is not allowed (DNS rebinding protection): "
                "use the address that `gpuherd ui --url` prints"
            )
        token, source = self._token(headers, query)
        if token is None:
            raise Refused(
                "this gpuherd daemon needs its token: open the URL that `gpuherd ui --url` "
                "prints, or send 'Authorization: token TOKEN'"
            )
        if source == "code":
            if scope["method"] != "GET" or scope.get("path", "/").startswith("/api/"):
                raise Refused("a one-time ?code= opens a dashboard page, nothing else")
            try:
                self.codes.redeem(token, scope.get("client"), scope.get("server"))
            except CodeRefused as exc:
                raise Refused(str(exc)) from None
            return source
        expected = self.cookie_value if source == "cookie" else self.token
        if not hmac.compare_digest(token.encode(), expected.encode()):
            raise Refused(
                "wrong token (`gpuherd ui --new-token` or `ui --stop` changed it?): "
                "`gpuherd ui --url` prints the current URL"
            )
        if scope["method"] not in SAFE_METHODS:
            _check_same_origin(headers, host, cookie_only=source == "cookie")
        return source

    def _token(self, headers: Headers, query: QueryParams) -> tuple[str | None, str]:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() in ("token", "bearer") and value.strip():
            return value.strip(), "header"
        if "token" in query:
            return query["token"], "query"
        if "code" in query:
            return query["code"], "code"
        cookies = _cookies(headers.get("cookie", ""))
        if self.cookie in cookies:
            return cookies[self.cookie], "cookie"
        return None, ""

    async def _redirect_with_cookie(self, scope: Scope, send: Send, query: QueryParams) -> None:
        """A page visit with ?token= (or ?code=): keep the token in a cookie (a value made
        from it) and drop it from the URL."""
        rest = urlencode([(k, v) for k, v in query.multi_items() if k not in ("token", "code")])
        location = _same_path(scope) + ("?" + rest if rest else "")
        cookie = f"{self.cookie}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1", "replace")),
                    (b"set-cookie", cookie.encode()),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                    *SECURITY_HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What a path keeps as it is in a redirect's Location (RFC 3986's pchar, `/`, and `%` of the
escapes it came with); any other byte is escaped: CR, LF, a space, `\\`, non-ASCII."""


def _same_path(scope: Scope) -> str:
    """The request's path as a redirect to it names it: as it was sent, escaped (`raw_path`;
    the decoded `path` turned `/sweeps/lr-%C3%A9` into the byte `\\xe9`, and `/%0d%0a…`
    into a header with a line break, which failed), and never starting `//`, which a browser
    reads as another host's address (`//evil.example/`: an open redirect)."""
    raw = scope.get("raw_path") or scope.get("path", "/").encode()
    path = quote(raw, safe=_PATH_SAFE)
    return "/" + path.lstrip("/")


def _check_same_origin(headers: Headers, host: str, cookie_only: bool) -> None:
    origin = headers.get("origin")
    if origin is not None:
        if _netloc(origin) != host.lower():
            raise Refused(
                f"cross-site request refused: Origin '{origin}' is not this dashboard ({host})"
            )
        return
    referer = headers.get("referer")
    if referer is not None and _netloc(referer) != host.lower():
        raise Refused(f"cross-site request refused: Referer is not this dashboard ({host})")
    if referer is None and cookie_only:
        raise Refused(
            "a request that changes something needs an Origin or Referer header, "
            "or the token in an 'Authorization: token …' header"
        )


def _netloc(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return parts.netloc.lower()


def _cookies(header: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            found.setdefault(name, value.strip().strip('"'))
    return found


def with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return wrapped


async def _refuse(scope: Scope, send: Send, reason: str) -> None:
    await answer_error(scope, send, 403, reason, SECURITY_HEADERS)
