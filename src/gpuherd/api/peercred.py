"""Only the daemon's own user may talk to it over the Unix socket (SO_PEERCRED).

The socket file is 0600 in a 0700 folder; this is the second lock behind that one, for a
socket whose folder permissions were loosened or a process that inherited an open socket.
The connections that pass are kept in bounds as the TCP listener's are (connections.py).
"""

from __future__ import annotations

import asyncio
import logging
import os

from gpuherd.api.connections import GuardedH11, Note
from gpuherd.socket_peer import peer_uid

OTHER_USER = Note(logging.WARNING, "refused a connection from uid %d on the Unix socket")
"""(Once a minute at most: another user's process could connect again and again.)"""


class PeerCheckedH11(GuardedH11):
    def refused(self, transport: asyncio.Transport) -> bool:
        sock = transport.get_extra_info("socket")
        uid = None if sock is None else peer_uid(sock)
        if uid is not None and uid != os.getuid():
            OTHER_USER.happened(uid)
            return True
        return False
