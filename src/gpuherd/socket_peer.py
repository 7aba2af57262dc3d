"""Whose process is at the other end of a Unix socket (SO_PEERCRED), with no import but the
standard library and gpuherd.errors: the daemon refuses other users' connections
(api/peercred.py), and the client refuses to talk to a socket another user serves
(client.py), which would receive its requests, each submission's whole environment (API
keys) among them."""

from __future__ import annotations

import os
import socket
import struct

from gpuherd.errors import DaemonError

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None for other sockets)."""
    if sock.family != socket.AF_UNIX:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    _pid, uid, _gid = _UCRED.unpack(raw)
    return int(uid)


def another_users_socket(path: object, uid: int) -> str:
    """The client's one line for a socket that another user's process serves: someone took
    the path first (a GPUHERD_SOCKET in a folder others can write, such as /tmp)."""
    return (
        f"{path} is served by another user's process (uid {uid}), not by your daemon: "
        "nothing was sent to it. Put the socket in a folder only you can write "
        "(unset GPUHERD_SOCKET, or point it at such a folder)"
    )


def refuse_another_users(sock: socket.socket, path: object) -> None:
    """Close `sock` and raise DaemonError if another user's process serves it."""
    owner = peer_uid(sock)
    if owner is not None and owner != os.getuid():
        sock.close()
        raise DaemonError(another_users_socket(path, owner))
