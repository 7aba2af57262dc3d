"""A TCP address to listen on (`daemon start --listen`, the dashboard's listener): read from
what the user typed, and written back. Apart from api/listener.py so that the CLI checks
`--listen` before any daemon starts, without importing the web framework."""

from __future__ import annotations

from gpuherd.core.text import ascii_digits
from gpuherd.errors import InvalidValue


def parse_address(text: str) -> tuple[str, int]:
    """'127.0.0.1:8888', '0.0.0.0:8888', '[::1]:8888', 'myhost:8888', or a port alone."""
    text = text.strip()
    if ascii_digits(text):
        host, port_text = "127.0.0.1", text
    elif text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep or ":" in host:
            raise InvalidValue(
                f"invalid listen address '{text}': use HOST:PORT, e.g. 127.0.0.1:8888"
            )
    if not ascii_digits(port_text) or not 0 <= int(port_text) <= 65535:
        raise InvalidValue(f"invalid port in listen address '{text}': use 0-65535")
    if _bad_ipv4(host):
        raise InvalidValue(
            f"invalid listen address '{text}': {host} is no IPv4 address (four numbers from "
            f"0 to 255): use 127.0.0.1:{port_text} (this machine only), 0.0.0.0:{port_text} "
            "(every interface) or one of this machine's addresses"
        )
    return host or "127.0.0.1", int(port_text)


def _bad_ipv4(host: str) -> bool:
    """Whether `host` is written as an IPv4 address (digits and dots) that is none, as the
    system reads one (`127.1` is 127.0.0.1): `999.1.1.1` was looked up as a host name, and
    the start said `cannot listen on 999.1.1.1:80: Name or service not known`, no more."""
    if not host or host.strip("0123456789.") or not host.isascii():
        return False
    import socket  # (deferred: for this form of address alone)

    try:
        socket.inet_aton(host)
    except OSError:
        return True
    return False


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def every_interface(host: str) -> bool:
    """Whether a listen address's host (`0.0.0.0`, `[::]`) is every interface of the machine:
    other machines reach it too."""
    return host.strip("[]") in ("0.0.0.0", "::", "")
