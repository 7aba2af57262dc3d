"""Only the daemon's own user may talk to it over the Unix socket (SO_PEERCRED).

The socket file is 0600 in a 0700 folder; this is the second lock behind that one, for a
socket whose folder permissions were loosened or a process that inherited an open socket.
"""

from __future__ import annotations

import asyncio
import logging
import os

from uvicorn.protocols.http.h11_impl import H11Protocol

from gpuherd.socket_peer import peer_uid

log = logging.getLogger("gpuherd.api")


class PeerCheckedH11(H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        uid = None if sock is None else peer_uid(sock)
        if uid is not None and uid != os.getuid():
            log.warning("refused a connection from uid %d on the Unix socket", uid)
            transport.close()
